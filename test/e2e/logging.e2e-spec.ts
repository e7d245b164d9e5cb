import type { AddressInfo } from 'node:net';
import { SseClient } from '../support/sse-client';
import { embeddedDatabase, expectError, TestApp, TestTenant } from '../support/test-app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DB_PASSWORD = 'pw-Recognisable-0xC0FFEE';

/** The database URL with a recognisable password (trust authentication ignores it). */
function urlWithPassword(): string {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.username = url.username || 'postgres';
  url.password = DB_PASSWORD;
  return url.toString();
}

describe('logs and request ids', () => {
  let service: TestApp;
  let tenant: TestTenant;
  const lines = () =>
    service.logs
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const accessLines = () => lines().filter((line) => line.msg === 'request');

  beforeAll(async () => {
    service = await TestApp.start({
      LOG_LEVEL: 'info',
      DATABASE_URL: urlWithPassword(),
      EVENT_BUS: embeddedDatabase() ? 'memory' : 'postgres',
      EVENT_STREAM_HEARTBEAT_MS: '100',
    });
    tenant = await service.tenant();
  });
  afterAll(() => service.close());

  it('a sane X-Request-Id is kept and echoed; an insane one is replaced by a UUID', async () => {
    const kept = await service.inject({ method: 'GET', url: '/health/live', headers: { 'x-request-id': 'edge-7f3a.b_c:42' } });
    expect(kept.headers['x-request-id']).toBe('edge-7f3a.b_c:42');
    for (const insane of ['has space', 'x'.repeat(129), 'line\tbreak', `tw_${'A'.repeat(43)}`, '']) {
      const replaced = await service.inject({ method: 'GET', url: '/health/live', headers: { 'x-request-id': insane } });
      expect(replaced.headers['x-request-id']).toMatch(UUID);
    }
    expect((await service.inject({ method: 'GET', url: '/health/live' })).headers['x-request-id']).toMatch(UUID);
  });

  it('errors carry the request id too (401, 404, 405, a bad body)', async () => {
    const answers = [
      await service.inject({ method: 'GET', url: '/organizations/', headers: { 'x-request-id': 'err-401' } }),
      await service.inject({ method: 'GET', url: '/nowhere', headers: { ...tenant.headers(), 'x-request-id': 'err-404' } }),
      await service.inject({ method: 'DELETE', url: '/health', headers: { 'x-request-id': 'err-405' } }),
      await service.inject({ method: 'POST', url: '/events/', headers: { ...tenant.headers({ twin: true }), 'content-type': 'application/vnd.api+json', 'x-request-id': 'err-400' }, payload: '{' }),
    ];
    expect(answers.map((answer) => [answer.statusCode, answer.headers['x-request-id']])).toEqual([
      [401, 'err-401'],
      [404, 'err-404'],
      [405, 'err-405'],
      [400, 'err-400'],
    ]);
    for (const answer of answers) expectError(answer, answer.statusCode);
  });

  it('one access line per request, at info, with method, route template, status, duration and request id', async () => {
    const twinId = tenant.twinId;
    await service.inject({ method: 'GET', url: `/twins/${twinId}/?x=1`, headers: { ...tenant.headers(), 'x-request-id': 'access-1' } });
    const line = accessLines().filter((l) => l.requestId === 'access-1');
    expect(line).toHaveLength(1);
    expect(line[0]).toEqual({
      level: 'info',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      pid: process.pid,
      hostname: expect.any(String),
      requestId: 'access-1',
      method: 'GET',
      route: '/twins/:id',
      status: expect.any(Number),
      durationMs: expect.any(Number),
      msg: 'request',
    });
    // An unknown path is not its URL (cardinality, and what a client typed into it).
    await service.inject({ method: 'GET', url: '/no/such/path', headers: { 'x-request-id': 'access-2' } });
    expect(accessLines().find((l) => l.requestId === 'access-2')).toEqual(expect.objectContaining({ route: 'unmatched', status: 404 }));
  });

  it('an event stream gets the request id and its access line when it ends', async () => {
    await service.app.listen(0, '127.0.0.1');
    const port = (service.app.getHttpServer().address() as AddressInfo).port;
    const client = await SseClient.open(port, { ...tenant.headers({ twin: true }), 'x-request-id': 'stream-1' });
    expect(client.response.statusCode).toBe(200);
    expect(client.response.headers['x-request-id']).toBe('stream-1');
    client.close();
    for (let i = 0; i < 50 && !accessLines().some((l) => l.requestId === 'stream-1'); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(accessLines().filter((l) => l.requestId === 'stream-1')).toEqual([expect.objectContaining({ route: '/events/stream', status: 200, method: 'GET' })]);
  });

  it('every line is the same JSON shape, Nest’s own lines included, and no secret reaches the log', async () => {
    const token = tenant.token;
    await service.inject({ method: 'GET', url: '/organizations/', headers: { ...tenant.headers(), cookie: `session=${token}` } });
    await service.inject({ method: 'GET', url: `/organizations/?access_token=${token}`, headers: { authorization: `Bearer ${token}` } });
    await service.inject({ method: 'POST', url: '/events/', headers: { ...tenant.headers({ twin: true }), 'content-type': 'application/vnd.api+json', 'x-request-id': token }, payload: `{"password":"${token}"` });
    const text = service.logs.join('');
    const all = lines();
    for (const line of all) {
      expect(Object.keys(line).slice(0, 4)).toEqual(['level', 'time', 'pid', 'hostname']);
      expect(typeof line.msg).toBe('string');
    }
    // Nest's lines (the database module's start-up line) went through the same logger.
    const nest = all.find((line) => line.context === 'Database');
    expect(nest).toEqual(expect.objectContaining({ level: 'info', msg: expect.stringContaining('database:') }));
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toContain(token);
    expect(text).not.toContain(DB_PASSWORD);
    expect(text).not.toMatch(/Token tw_/);
  });
});
