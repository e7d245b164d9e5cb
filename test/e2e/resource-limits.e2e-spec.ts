import { connect, Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../src/config/app-config';
import { MAX_EVENT_DATA_BYTES } from '../../src/events/event-data';
import { png } from '../support/images';
import { document, expectError, JSON_API, TestApp, TestTenant } from '../support/test-app';

/**
 * Unrestricted resource consumption (OWASP API4): every limit, shown by a test. The per-token rate limit
 * (429 with Retry-After, configurable, shared through Redis when REDIS_URL is set) is shown in
 * foundation.e2e-spec.ts ("rate limits") and rate-limit.e2e-spec.ts, not repeated here.
 */

const IDLE_TIMEOUT_MS = 500;

describe('resource limits', () => {
  let service: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    service = await TestApp.start({ IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS), EVENT_STREAM_HEARTBEAT_MS: '100', EVENT_BUS: 'memory' });
    tenant = await service.tenant();
  }, 60_000);
  afterAll(() => service?.close());

  it('the defaults: 1 MiB bodies, 5 MiB images, pages of 100 (geo 10,000), 30 s to send a request, 60 s idle', () => {
    const config = loadConfig({});
    expect(config).toEqual(
      expect.objectContaining({
        bodyLimitBytes: 1024 * 1024,
        imageLimitBytes: 5 * 1024 * 1024,
        pageSizeMax: 100,
        geoPageSizeMax: 10_000,
        requestTimeoutMs: 30_000,
        idleTimeoutMs: 60_000,
      }),
    );
    expect(() => loadConfig({ IDLE_TIMEOUT_MS: '1000', EVENT_STREAM_HEARTBEAT_MS: '1000' })).toThrow(/IDLE_TIMEOUT_MS must exceed/);
  });

  describe('body size', () => {
    it('a JSON body over 1 MiB is a 413 errors document, and nothing is stored', async () => {
      const payload = document({ type: 'events', attributes: { name: 'big', category: 'c', data: { s: 'x'.repeat(1024 * 1024) } } });
      const response = await service.inject({ method: 'POST', url: '/events/', headers: { ...tenant.headers({ twin: true }), 'content-type': JSON_API }, payload });
      expectError(response, 413);
      const rows = await service.dataSource.query(`SELECT count(*)::int AS n FROM events WHERE twin_id = $1`, [tenant.twinId]);
      expect(rows[0].n).toBe(0);
    });

    it('an image over 5 MiB is a 413; one under it is accepted', async () => {
      const image = png(1, 1);
      const big = Buffer.concat([image, Buffer.alloc(5 * 1024 * 1024)]);
      expectError(await service.inject({ method: 'POST', url: '/images/', headers: { ...tenant.headers(), 'content-type': 'image/png' }, payload: big }), 413);
      const ok = await service.inject({ method: 'POST', url: '/images/', headers: { ...tenant.headers(), 'content-type': 'image/png' }, payload: image });
      expect(ok.statusCode).toBe(201);
    });
  });

  describe('page size', () => {
    it.each(['/twins/', '/my/twins/', '/organizations/'])('%s: page_size above 100 is a 400 naming page_size; 100 is fine', async (url) => {
      expectError(await service.inject({ method: 'GET', url: `${url}?page_size=101`, headers: tenant.headers() }), 400, { parameter: 'page_size' });
      expect((await service.inject({ method: 'GET', url: `${url}?page_size=100`, headers: tenant.headers() })).statusCode).toBe(200);
    });

    it.each(['/quests/', '/my/quests/', '/events/'])('%s (as a twin): page_size above 100 is a 400', async (url) => {
      expectError(await service.inject({ method: 'GET', url: `${url}?page_size=101`, headers: tenant.headers({ twin: true }) }), 400, { parameter: 'page_size' });
      expectError(await service.inject({ method: 'GET', url: `${url}?page_size=9007199254740993`, headers: tenant.headers({ twin: true }) }), 400, { parameter: 'page_size' });
    });

    it('geo listing: page_size above 10,000 is a 400; 10,000 is fine', async () => {
      const geo = { ...tenant.headers(), accept: 'application/geo+json' };
      expectError(await service.inject({ method: 'GET', url: '/twins/?page_size=10001', headers: geo }), 400, { parameter: 'page_size' });
      const ok = await service.inject({ method: 'GET', url: '/twins/?page_size=10000', headers: geo });
      expect(ok.statusCode).toBe(200);
      expect(ok.headers['content-type']).toMatch(/^application\/geo\+json/);
    });
  });

  it(`event data: ${MAX_EVENT_DATA_BYTES} bytes serialised is accepted, one more is a 400 on /data/attributes/data`, async () => {
    const post = (data: Record<string, unknown>) =>
      service.inject({ method: 'POST', url: '/events/', headers: { ...tenant.headers({ twin: true }), 'content-type': JSON_API }, payload: document({ type: 'events', attributes: { name: 'n', category: 'c', data } }) });
    const exact = { s: 'x'.repeat(MAX_EVENT_DATA_BYTES - '{"s":""}'.length) };
    expect((await post(exact)).statusCode).toBe(201);
    expectError(await post({ s: `${exact.s}x` }), 400, { pointer: '/data/attributes/data' });
  });

  describe('timeouts on a real socket', () => {
    let port: number;
    beforeAll(async () => {
      await service.app.listen(0, '127.0.0.1');
      port = (service.app.getHttpServer().address() as AddressInfo).port;
    });

    /** Opens a socket, writes `bytes`, then stalls; resolves with how long until the server closed it, and what it sent. */
    const stall = (bytes: string) =>
      new Promise<{ ms: number; received: string }>((resolve, reject) => {
        const started = Date.now();
        let received = '';
        const socket: Socket = connect(port, '127.0.0.1', () => socket.write(bytes));
        socket.on('data', (chunk) => (received += chunk.toString()));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve({ ms: Date.now() - started, received }));
        setTimeout(() => {
          socket.destroy();
          reject(new Error('the server kept a stalled connection open for 10 s'));
        }, 10_000);
      });

    it('a client that sends half its headers and stalls is cut off after IDLE_TIMEOUT_MS', async () => {
      const { ms } = await stall('GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ');
      expect(ms).toBeGreaterThanOrEqual(IDLE_TIMEOUT_MS - 50);
      expect(ms).toBeLessThan(IDLE_TIMEOUT_MS + 1500);
    });

    it('a client that announces a body and stalls in it is cut off after IDLE_TIMEOUT_MS', async () => {
      const head = `POST /events/ HTTP/1.1\r\nHost: x\r\nAuthorization: Token ${tenant.token}\r\nX-Organization: ${tenant.organizationId}\r\nX-Twin: ${tenant.twinId}\r\nContent-Type: ${JSON_API}\r\nContent-Length: 1000\r\n\r\n{"data":`;
      const { ms } = await stall(head);
      expect(ms).toBeLessThan(IDLE_TIMEOUT_MS + 1500);
      const rows = await service.dataSource.query(`SELECT count(*)::int AS n FROM events WHERE twin_id = $1 AND name = 'n'`, [tenant.twinId]);
      expect(rows[0].n).toBe(1); // only the event of the data-cap test
    });

    it('an idle keep-alive connection is closed after IDLE_TIMEOUT_MS, once its request was answered', async () => {
      const { ms, received } = await stall('GET /health HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
      expect(received).toMatch(/^HTTP\/1\.1 200/);
      expect(ms).toBeLessThan(IDLE_TIMEOUT_MS + 1500);
    });

    it('an open event stream outlives IDLE_TIMEOUT_MS: its heartbeats keep it active', async () => {
      const socket = connect(port, '127.0.0.1');
      let received = '';
      let closed = false;
      socket.on('data', (chunk) => (received += chunk.toString()));
      socket.on('close', () => (closed = true));
      socket.write(`GET /events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Token ${tenant.token}\r\nX-Organization: ${tenant.organizationId}\r\nX-Twin: ${tenant.twinId}\r\n\r\n`);
      await new Promise((resolve) => setTimeout(resolve, IDLE_TIMEOUT_MS * 3));
      expect(closed).toBe(false);
      expect(received).toMatch(/^HTTP\/1\.1 200/);
      expect(received).toContain(': heartbeat');
      socket.destroy();
    });
  });
});
