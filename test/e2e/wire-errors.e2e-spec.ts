import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { JSON_API, TestApp, TestTenant } from '../support/test-app';

/**
 * Every answer the server gives is a JSON:API errors document, including those decided below the
 * routes: by Node's HTTP parser (431, 400), by Node for an unknown `Expect` (417), by Fastify's router
 * (a bad percent-encoding, an overlong path parameter) and by the body limits (413, 415), and a
 * refusal decided before the body was read still reaches a client that is sending it. Through a real
 * socket: `inject` skips the parser and the socket handling these cases are about.
 */

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `request` bytes on a new connection and reads the answer until the server closes or the body is complete. */
function rawRequest(port: number, request: string | Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const finish = () => {
      // An interim 100 Continue precedes the answer itself.
      const text = Buffer.concat(chunks).toString('utf8').replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n').slice(0, Number(headers['content-length'] ?? Infinity)) });
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const text = Buffer.concat(chunks).toString('utf8').replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
      const end = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text.slice(0, end))?.[1];
      if (end >= 0 && length !== undefined && Buffer.byteLength(text.slice(end + 4)) >= Number(length)) {
        socket.destroy();
        finish();
      }
    });
    socket.on('end', finish);
    socket.on('error', (error) => (chunks.length > 0 ? finish() : reject(error)));
    socket.write(request);
  });
}

function expectErrorsDocument(answer: { status: number; headers: Record<string, string | undefined>; body: string }, status: number, code?: string) {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/vnd\.api\+json/);
  const body = JSON.parse(answer.body) as { errors: Record<string, unknown>[] };
  expect(body.errors).toHaveLength(1);
  expect(body.errors[0]).toEqual(expect.objectContaining({ status: String(status), title: expect.any(String), detail: expect.any(String) }));
  if (code) expect(body.errors[0].code).toBe(code);
}

describe('wire-level failures are JSON:API errors documents that reach the client', () => {
  let service: TestApp;
  let tenant: TestTenant;
  let port: number;
  let base: string;

  beforeAll(async () => {
    service = await TestApp.start({ BODY_LIMIT_BYTES: String(64 * 1024), IMAGE_LIMIT_BYTES: String(256 * 1024) });
    await service.app.listen(0, '127.0.0.1');
    port = (service.app.getHttpServer().address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
    tenant = await service.tenant();
  });
  afterAll(() => service.close());

  const headersOf = (response: Response) => Object.fromEntries(response.headers.entries());

  it('an Expect other than 100-continue → 417', async () => {
    const answer = await rawRequest(port, 'GET /health HTTP/1.1\r\nHost: x\r\nExpect: the-unexpected\r\n\r\n');
    expectErrorsDocument(answer, 417, 'expectation_failed');
  });

  it('Expect: 100-continue still works', async () => {
    const answer = await rawRequest(port, 'GET /health HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n');
    expect(answer.status).toBe(200);
  });

  it('an invalid percent-encoding in the path → 400', async () => {
    const response = await fetch(`${base}/twins/%E0%A4%A`, { headers: tenant.headers() });
    expectErrorsDocument({ status: response.status, headers: headersOf(response), body: await response.text() }, 400, 'bad_url');
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });

  it('a path parameter over the router limit → 414', async () => {
    const response = await fetch(`${base}/twins/${'a'.repeat(300)}`, { headers: tenant.headers() });
    expectErrorsDocument({ status: response.status, headers: headersOf(response), body: await response.text() }, 414, 'uri_too_long');
  });

  it('headers over the parser limit → 431', async () => {
    const answer = await rawRequest(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(40_000)}\r\n\r\n`);
    expectErrorsDocument(answer, 431, 'headers_too_large');
    expect(answer.headers.connection).toBe('close');
  });

  it('a request that is not HTTP → 400', async () => {
    const answer = await rawRequest(port, 'HELLO / SMTP/1.0\r\n\r\n');
    expectErrorsDocument(answer, 400, 'bad_request');
  });

  it('404 and 405 are errors documents too', async () => {
    const missing = await fetch(`${base}/nothing-here`, { headers: tenant.headers() });
    expectErrorsDocument({ status: missing.status, headers: headersOf(missing), body: await missing.text() }, 404);
    const wrongMethod = await fetch(`${base}/organizations/`, { method: 'PUT', headers: tenant.headers() });
    expectErrorsDocument({ status: wrongMethod.status, headers: headersOf(wrongMethod), body: await wrongMethod.text() }, 405);
  });

  describe('a body over the limit: the 413 arrives while the client is still sending', () => {
    const oversizedJson = () => Buffer.alloc(8 * 1024 * 1024, 'x');
    const events = () => ({ ...tenant.headers({ twin: true }), 'content-type': JSON_API });

    it('a client that writes the whole body before reading: no EPIPE, then the 413 (20 uploads)', async () => {
      // Without the drain the connection closed while the body was still coming: the client's writes
      // failed (EPIPE on every one of 20 here), and a proxy such as nginx answers 502 for that.
      const outcomes: string[] = [];
      for (let i = 0; i < 20; i++) {
        const body = oversizedJson();
        const head = `POST /events/ HTTP/1.1\r\nHost: x\r\n${Object.entries(events()).map(([name, value]) => `${name}: ${value}\r\n`).join('')}Content-Length: ${body.length}\r\n\r\n`;
        const outcome = await new Promise<string>((resolve) => {
          const socket = connect(port, '127.0.0.1');
          let received = '';
          socket.on('data', (chunk) => (received += chunk.toString('utf8')));
          socket.on('error', (error: NodeJS.ErrnoException) => resolve(`write failed: ${error.code}`));
          socket.on('close', () => resolve(received.split('\r\n')[0]));
          socket.write(head);
          socket.write(body);
        });
        outcomes.push(outcome);
      }
      expect(outcomes).toEqual(Array(20).fill('HTTP/1.1 413 Payload Too Large'));
    });

    it('fetch (undici), 20 uploads with Content-Length', async () => {
      const outcomes: string[] = [];
      for (let i = 0; i < 20; i++) {
        try {
          const response = await fetch(`${base}/events/`, { method: 'POST', headers: events(), body: oversizedJson() });
          const body = await response.text();
          expectErrorsDocument({ status: response.status, headers: headersOf(response), body }, 413, 'payload_too_large');
          outcomes.push(String(response.status));
        } catch (error) {
          outcomes.push(`${(error as Error).message} ${String((error as { cause?: Error }).cause?.message ?? '')}`);
        }
      }
      expect(outcomes).toEqual(Array(20).fill('413'));
    });

    it('fetch, a streamed body without Content-Length (chunked)', async () => {
      const chunks = Array.from({ length: 128 }, () => new Uint8Array(64 * 1024).fill(120));
      const body = new ReadableStream({
        pull(controller) {
          const next = chunks.shift();
          if (next) controller.enqueue(next);
          else controller.close();
        },
      });
      const response = await fetch(`${base}/events/`, { method: 'POST', headers: events(), body, duplex: 'half' } as RequestInit);
      expectErrorsDocument({ status: response.status, headers: headersOf(response), body: await response.text() }, 413);
    });

    it('an image over the image limit', async () => {
      const response = await fetch(`${base}/images/`, { method: 'POST', headers: { ...tenant.headers(), 'content-type': 'image/png' }, body: Buffer.alloc(8 * 1024 * 1024, 1) });
      expectErrorsDocument({ status: response.status, headers: headersOf(response), body: await response.text() }, 413);
    });

    it('a large body of an unsupported media type → 415, received', async () => {
      const response = await fetch(`${base}/events/`, { method: 'POST', headers: { ...tenant.headers({ twin: true }), 'content-type': 'text/plain' }, body: Buffer.alloc(8 * 1024 * 1024, 'x') });
      expectErrorsDocument({ status: response.status, headers: headersOf(response), body: await response.text() }, 415);
    });

    it('curl', async () => {
      const headers = Object.entries(events()).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
      const output = await new Promise<string>((resolve, reject) =>
        execFile(
          'curl',
          ['-sS', '-o', '-', '-w', '\n%{http_code}', '-X', 'POST', ...headers, '--data-binary', '@-', `${base}/events/`],
          { maxBuffer: 16 * 1024 * 1024 },
          (error, stdout, stderr) => (error ? reject(new Error(`curl: ${error.message} ${stderr}`)) : resolve(stdout)),
        ).stdin!.end(oversizedJson()),
      );
      const status = Number(output.slice(output.lastIndexOf('\n') + 1));
      expectErrorsDocument({ status, headers: { 'content-type': JSON_API }, body: output.slice(0, output.lastIndexOf('\n')) }, 413);
    });

    it('the service keeps serving on new connections afterwards', async () => {
      const response = await fetch(`${base}/organizations/`, { headers: tenant.headers() });
      expect(response.status).toBe(200);
    });
  });
});
