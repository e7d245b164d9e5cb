import { get, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { endEventStreamsOnClose, formatSseFrame, sendEventStream, type SseFrame } from '../../src/common/http/sse';

/**
 * A source the test drives: `next()` answers from `items` (or waits for `add`), counts its pulls and
 * records `return()`; `return()` answers a waiting `next()` at once, as the adapter expects.
 */
class Source implements AsyncIterableIterator<SseFrame> {
  pulls = 0;
  returned = false;
  private waiting: ((result: IteratorResult<SseFrame>) => void) | undefined;

  constructor(
    private readonly items: SseFrame[] = [],
    private readonly endless = true,
  ) {}

  add(frame: SseFrame): void {
    if (this.waiting) {
      const wake = this.waiting;
      this.waiting = undefined;
      wake({ value: frame, done: false });
    } else this.items.push(frame);
  }

  next(): Promise<IteratorResult<SseFrame>> {
    this.pulls++;
    if (this.returned) return Promise.resolve({ value: undefined, done: true });
    const item = this.items.shift();
    if (item) return Promise.resolve({ value: item, done: false });
    if (!this.endless) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  return(): Promise<IteratorResult<SseFrame>> {
    this.returned = true;
    this.waiting?.({ value: undefined, done: true });
    this.waiting = undefined;
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

interface Client {
  response: IncomingMessage;
  text(): string;
  /** Bytes received so far (cheap to poll, unlike text()). */
  bytes(): number;
  ended: Promise<void>;
  close(): void;
}

const until = async (condition: () => boolean, what: string, timeoutMs = 3000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('SSE adapter (common/http/sse.ts)', () => {
  describe('formatSseFrame', () => {
    it('writes the fields in order and ends the block with a blank line', () => {
      expect(formatSseFrame({ retry: 2000, comment: 'hello' })).toBe('retry: 2000\n: hello\n\n');
      expect(formatSseFrame({ data: '{"a":1}', id: 'x', event: 'created' })).toBe('event: created\nid: x\ndata: {"a":1}\n\n');
      expect(formatSseFrame({ comment: 'heartbeat 2026-01-01T00:00:00.000Z' })).toBe(': heartbeat 2026-01-01T00:00:00.000Z\n\n');
    });

    it('splits multi-line data and comments into one line each, and keeps event and id on one line', () => {
      expect(formatSseFrame({ data: 'a\nb\r\nc' })).toBe('data: a\ndata: b\ndata: c\n\n');
      expect(formatSseFrame({ comment: 'one\ntwo' })).toBe(': one\n: two\n\n');
      expect(formatSseFrame({ event: 'x\ndata: injected', id: '1\r2' })).toBe('event: x data: injected\nid: 1 2\n\n');
    });
  });

  describe('sendEventStream over a socket', () => {
    let server: FastifyInstance;
    let port: number;
    let source: Source;
    let finished: Promise<void> | undefined;
    const clients: Client[] = [];

    beforeEach(async () => {
      source = new Source();
      finished = undefined;
      server = Fastify();
      endEventStreamsOnClose(server);
      server.addHook('onRequest', (request, reply, done) => {
        reply.header('x-request-id', 'req-1');
        done();
      });
      server.get('/stream', (request, reply) => {
        finished = sendEventStream(request, reply, source, (frame: SseFrame) => frame);
        return finished;
      });
      await server.listen({ port: 0, host: '127.0.0.1' });
      port = (server.server.address() as AddressInfo).port;
    });

    afterEach(async () => {
      for (const client of clients.splice(0)) client.close();
      await server.close();
    });

    function open(): Promise<Client> {
      return new Promise((resolve, reject) => {
        const request = get({ host: '127.0.0.1', port, path: '/stream' }, (response) => {
          const chunks: Buffer[] = [];
          let received = 0;
          response.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            received += chunk.length;
          });
          const ended = new Promise<void>((done) => response.on('end', done).on('close', done));
          response.on('error', () => undefined);
          const client = { response, text: () => Buffer.concat(chunks).toString('utf8'), bytes: () => received, ended, close: () => request.destroy() };
          clients.push(client);
          resolve(client);
        });
        request.on('error', reject);
      });
    }

    it('answers 200 text/event-stream with the hooks\' headers, writes each frame and ends with the source', async () => {
      source = new Source([{ retry: 2000, comment: 'connected' }, { event: 'created', id: '1', data: '{}' }], false);
      const client = await open();
      await client.ended;
      expect(client.response.statusCode).toBe(200);
      expect(client.response.headers).toEqual(
        expect.objectContaining({
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache, no-store, no-transform',
          'x-accel-buffering': 'no',
          'x-content-type-options': 'nosniff',
          'x-frame-options': 'DENY',
          'referrer-policy': 'no-referrer',
          'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
          'x-request-id': 'req-1',
        }),
      );
      expect(client.text()).toBe('retry: 2000\n: connected\n\nevent: created\nid: 1\ndata: {}\n\n');
      await finished;
    });

    it('writes frames as the source produces them', async () => {
      // The head goes out with the first frame, so the client sees the answer once there is one.
      source.add({ comment: 'first' });
      const client = await open();
      await until(() => client.text() === ': first\n\n', 'the first frame');
      source.add({ data: 'second' });
      await until(() => client.text() === ': first\n\ndata: second\n\n', 'the second frame');
    });

    it('a client that disconnects ends the source, also while it waits for a message', async () => {
      source.add({ comment: 'hello' });
      const client = await open();
      await until(() => client.text().length > 0, 'the first frame');
      await until(() => source.pulls === 2, 'a pending next()');
      client.close();
      await until(() => source.returned, 'return() on the source');
      await finished;
    });

    it('pulls the next message only when the socket drained the previous ones', async () => {
      const frame = { data: 'x'.repeat(256 * 1024) };
      const total = 64;
      const expectedBytes = [...Array(total).keys()].reduce((sum, i) => sum + Buffer.byteLength(formatSseFrame({ ...frame, id: String(i) })), 0);
      for (let i = 0; i < total; i++) source.add({ ...frame, id: String(i) });
      const client = await open();
      client.response.pause();
      // Socket buffers take a few frames; after that the adapter waits instead of pulling.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const pulledWhilePaused = source.pulls;
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(source.pulls).toBe(pulledWhilePaused);
      expect(pulledWhilePaused).toBeLessThan(total);
      client.response.resume();
      await until(() => client.bytes() >= expectedBytes, 'every frame received', 20_000);
      const ids = [...client.text().matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
      expect(ids).toEqual([...Array(total).keys()]);
    });

    it('closing the server ends open streams and their sources', async () => {
      source.add({ comment: 'hello' });
      const client = await open();
      await until(() => client.text().length > 0, 'the first frame');
      const started = Date.now();
      await server.close();
      await client.ended;
      expect(source.returned).toBe(true);
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('a source that fails ends the response after what it produced', async () => {
      const failing: AsyncIterable<SseFrame> = {
        async *[Symbol.asyncIterator]() {
          yield { comment: 'before' };
          throw new Error('source broke');
        },
      };
      await server.close();
      server = Fastify();
      server.get('/failing', (request, reply) => sendEventStream(request, reply, failing, (frame) => frame));
      await server.listen({ port: 0, host: '127.0.0.1' });
      port = (server.server.address() as AddressInfo).port;
      const text = await new Promise<string>((resolve, reject) => {
        get({ host: '127.0.0.1', port, path: '/failing' }, (response) => {
          let body = '';
          response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          response.on('end', () => resolve(body));
        }).on('error', reject);
      });
      expect(text).toBe(': before\n\n');
    });
  });
});
