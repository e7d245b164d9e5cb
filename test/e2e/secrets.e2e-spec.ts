import { ADMIN_TOKEN, document, JSON_API, TestApp } from '../support/test-app';
import { buildWorld, World } from '../support/world';

/**
 * Secrets and transport hygiene (OWASP API8, security misconfiguration): tokens never reach the logs
 * or an errors document, security headers are on every answer, CORS is off unless CORS_ORIGINS names
 * the allowed origins.
 */
describe('secrets, security headers and CORS', () => {
  let service: TestApp;
  let world: World;
  const bodies: string[] = [];

  beforeAll(async () => {
    // Debug level: request logging on, the most the service ever writes.
    service = await TestApp.start({ LOG_LEVEL: 'debug' });
    world = await buildWorld(service, 'S');
  }, 60_000);
  afterAll(() => service?.close());

  it('no token appears in the logs or in any answer, after successes and every kind of failure', async () => {
    expect(bodies).toEqual([]);
    const t = world.tenant;
    const requests: Parameters<TestApp['inject']>[0][] = [
      { method: 'GET', url: '/organizations/', headers: t.headers() },
      { method: 'GET', url: '/events/', headers: t.headers({ twin: true }) },
      { method: 'GET', url: '/organizations/', headers: { authorization: `Token ${t.token}x` } },
      { method: 'GET', url: '/organizations/', headers: { authorization: `Bearer ${t.token}` } },
      { method: 'GET', url: '/organizations/', headers: { authorization: `Token ${t.token} ${t.token}` } },
      { method: 'GET', url: '/organizations/', headers: { authorization: `Token ${t.token}`, 'x-organization': t.token } },
      { method: 'GET', url: '/events/', headers: { ...t.headers(), 'x-twin': t.token } },
      { method: 'GET', url: '/events/', headers: { ...t.headers({ twin: true }), 'last-event-id': t.token } },
      { method: 'POST', url: '/events/', headers: { ...t.headers({ twin: true }), 'content-type': JSON_API, 'idempotency-key': t.token }, payload: document({ type: 'events', attributes: { name: 'n', category: 'c', data: {} } }) },
      { method: 'POST', url: '/events/', headers: { ...t.headers({ twin: true }), 'content-type': JSON_API }, payload: `{"data": "${t.token}` },
      { method: 'POST', url: '/events/', headers: { ...t.headers({ twin: true }), 'content-type': JSON_API }, payload: document({ type: 'events', attributes: { [t.token]: 1 } }) },
      { method: 'GET', url: `/events/?${t.token}=1`, headers: t.headers({ twin: true }) },
      { method: 'GET', url: '/admin/organizations/', headers: { authorization: `Token ${ADMIN_TOKEN}` } },
      { method: 'POST', url: '/admin/organizations/', headers: { authorization: `Token ${t.token}`, 'content-type': JSON_API }, payload: document({ type: 'organizations', attributes: { name: 'x' } }) },
      { method: 'POST', url: '/admin/organizations/', headers: { authorization: `Token ${ADMIN_TOKEN}x`, 'content-type': JSON_API }, payload: '{' },
      { method: 'DELETE', url: `/admin/tokens/${world.secondTokenId}`, headers: { authorization: `Token ${ADMIN_TOKEN}` } },
      { method: 'GET', url: '/organizations/', headers: { authorization: `Token ${world.secondToken}`, 'x-organization': world.organizationId } },
      { method: 'GET', url: '/nowhere', headers: t.headers() },
    ];
    for (const request of requests) {
      const response = await service.inject(request);
      // A token the client put into the URL or the document may be named back to that client (the pointer
      // or parameter of its error): that discloses nothing. Headers are never echoed; logs never hold any.
      if (`${request.url} ${String(request.payload ?? '')}`.includes(t.token)) continue;
      bodies.push(`${response.statusCode} ${JSON.stringify(response.headers)} ${response.body}`);
    }
    // Minting a token is the one answer that carries one (once, by design); nothing else may.
    const minted = await service.inject({ method: 'POST', url: `/admin/accounts/${world.accountId}/tokens/`, headers: { authorization: `Token ${ADMIN_TOKEN}` } });
    const mintedToken: string = minted.json().data.attributes.token;

    const secrets = { 'tenant token': t.token, 'second (revoked) token': world.secondToken, 'minted token': mintedToken, ADMIN_TOKEN };
    const logs = service.logs.join('\n');
    expect(logs.length).toBeGreaterThan(0);
    // One access line per request (with the URL at debug level).
    expect(logs).toContain('"msg":"request"');
    for (const [name, secret] of Object.entries(secrets)) {
      expect({ name, inLogs: logs.includes(secret) }).toEqual({ name, inLogs: false });
      for (const body of bodies) expect({ name, inAnswer: body.includes(secret) }).toEqual({ name, inAnswer: false });
    }
    expect(logs).not.toMatch(/Token tw_/);
    // The token a client put into the URL is masked in the request line.
    expect(logs).toContain('/events/?tw_[redacted]=1');
  });

  it('security headers are on successes, errors, images and geo listings', async () => {
    const t = world.tenant;
    const answers = [
      await service.inject({ method: 'GET', url: '/health' }),
      await service.inject({ method: 'GET', url: '/organizations/', headers: t.headers() }),
      await service.inject({ method: 'GET', url: '/organizations/' }),
      await service.inject({ method: 'GET', url: '/nowhere' }),
      await service.inject({ method: 'DELETE', url: '/health' }),
      await service.inject({ method: 'GET', url: `/images/${world.privateImageId}/content`, headers: t.headers() }),
      await service.inject({ method: 'GET', url: '/twins/', headers: { ...t.headers(), accept: 'application/geo+json' } }),
    ];
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 401, 404, 405, 200, 200]);
    for (const answer of answers) {
      expect(answer.headers).toEqual(
        expect.objectContaining({ 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer', 'content-security-policy': "default-src 'none'; frame-ancestors 'none'" }),
      );
      expect(answer.headers['x-powered-by']).toBeUndefined();
    }
  });

  describe('CORS', () => {
    const preflight = (app: TestApp, origin: string) =>
      app.inject({
        method: 'OPTIONS',
        url: '/events/',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,x-organization,x-twin,content-type' },
      });

    it('off by default: no cross-origin headers for any origin', async () => {
      const response = await preflight(service, 'https://app.example.com');
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
      const simple = await service.inject({ method: 'GET', url: '/health', headers: { origin: 'https://app.example.com' } });
      expect(simple.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('CORS_ORIGINS: an allowed origin gets the headers, another origin does not', async () => {
      const cors = await TestApp.start({ CORS_ORIGINS: 'https://app.example.com, https://admin.example.com' });
      try {
        const allowed = await preflight(cors, 'https://app.example.com');
        expect(allowed.statusCode).toBe(204);
        expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.com');
        expect(String(allowed.headers['access-control-allow-headers']).toLowerCase()).toEqual(expect.stringContaining('x-organization'));
        expect(String(allowed.headers['access-control-allow-methods'])).toContain('PATCH');
        expect(allowed.headers['access-control-allow-credentials']).toBeUndefined();

        const other = await preflight(cors, 'https://evil.example.net');
        expect(other.headers['access-control-allow-origin']).toBeUndefined();
        const lookalike = await preflight(cors, 'https://app.example.com.evil.net');
        expect(lookalike.headers['access-control-allow-origin']).toBeUndefined();

        const simple = await cors.inject({ method: 'GET', url: '/organizations/', headers: { ...world.tenant.headers(), origin: 'https://admin.example.com' } });
        expect(simple.statusCode).toBe(200);
        expect(simple.headers['access-control-allow-origin']).toBe('https://admin.example.com');
        expect(String(simple.headers['access-control-expose-headers'])).toContain('Retry-After');
      } finally {
        await cors.close();
      }
    });
  });
});
