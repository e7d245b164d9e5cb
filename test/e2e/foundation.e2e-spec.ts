import type { Pool, PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { ADMIN_TOKEN, document, embeddedDatabase, expectError, JSON_API, MICROSECOND_TIMESTAMP, TestApp, TestTenant } from '../support/test-app';
import { Sql } from '../../src/database/sql';
import { TcpProxy } from '../support/tcp-proxy';

const admin = { authorization: `Token ${ADMIN_TOKEN}`, 'content-type': JSON_API };

describe('foundation: tenancy, admin API and the JSON:API wire', () => {
  let service: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;

  beforeAll(async () => {
    service = await TestApp.start();
    tenant = await service.tenant({ organization: 'Alpha' });
    other = await service.tenant({ organization: 'Beta' });
  });
  afterAll(() => service.close());

  describe('health and docs', () => {
    it('GET /health is public and reports the database', async () => {
      const response = await service.inject({ method: 'GET', url: '/health' });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ status: 'ok', database: { status: 'up', kind: expect.stringMatching(/^(postgres|embedded)$/) } });
      expect(response.headers['x-request-id']).toEqual(expect.any(String));
    });

    it('serves the OpenAPI document with the token and tenant headers as security schemes', async () => {
      const response = await service.inject({ method: 'GET', url: '/docs-json' });
      expect(response.statusCode).toBe(200);
      const spec = response.json();
      expect(Object.keys(spec.components.securitySchemes).sort()).toEqual(['AdminToken', 'Organization', 'Token', 'Twin']);
      expect(spec.components.securitySchemes.Organization).toEqual(expect.objectContaining({ in: 'header', name: 'X-Organization' }));
      expect(spec.paths['/organizations'].get.responses['401']).toBeDefined();
      const ui = await service.inject({ method: 'GET', url: '/docs' });
      expect(ui.statusCode).toBe(200);
    });
  });

  describe('Authorization header', () => {
    it('401 with WWW-Authenticate when missing', async () => {
      const response = await service.inject({ method: 'GET', url: '/organizations/', headers: { 'x-organization': tenant.organizationId } });
      const error = expectError(response, 401, { header: 'Authorization' });
      expect(response.headers['www-authenticate']).toBe('Token');
      expect(error.code).toBe('not_authenticated');
    });

    it.each([['Bearer abc'], ['Token'], ['Token a b'], ['tokenabc']])('401 when malformed: %s', async (value) => {
      const response = await service.inject({ method: 'GET', url: '/organizations/', headers: { authorization: value } });
      expectError(response, 401);
      expect(response.headers['www-authenticate']).toBe('Token');
    });

    it('401 for an unknown token', async () => {
      const response = await service.inject({ method: 'GET', url: '/organizations/', headers: { authorization: 'Token tw_unknown_token_value' } });
      expectError(response, 401);
    });
  });

  describe('X-Organization header', () => {
    it('400 naming the header when missing on a tenant route', async () => {
      const response = await service.inject({ method: 'GET', url: '/twins/', headers: { authorization: `Token ${tenant.token}` } });
      expect(expectError(response, 400, { header: 'X-Organization' }).code).toBe('invalid_header');
    });

    it('400 when not a UUID', async () => {
      const response = await service.inject({
        method: 'GET',
        url: '/organizations/',
        headers: { authorization: `Token ${tenant.token}`, 'x-organization': 'not-a-uuid' },
      });
      expectError(response, 400, { header: 'X-Organization' });
    });

    it('403 for an organization the account is not a member of', async () => {
      const response = await service.inject({
        method: 'GET',
        url: '/organizations/',
        headers: { authorization: `Token ${tenant.token}`, 'x-organization': other.organizationId },
      });
      expectError(response, 403, { header: 'X-Organization' });
    });

    it('403 for an organization that does not exist', async () => {
      const response = await service.inject({
        method: 'GET',
        url: '/organizations/',
        headers: { authorization: `Token ${tenant.token}`, 'x-organization': '00000000-0000-4000-8000-000000000000' },
      });
      expectError(response, 403, { header: 'X-Organization' });
    });
  });

  describe('X-Twin header', () => {
    it('400 naming the header when missing on a route that acts as a twin', async () => {
      expectError(await service.inject({ method: 'GET', url: '/quests/', headers: tenant.headers() }), 400, { header: 'X-Twin' });
      expectError(await service.inject({ method: 'GET', url: '/events/', headers: tenant.headers() }), 400, { header: 'X-Twin' });
    });

    it('400 when not a UUID', async () => {
      expectError(await service.inject({ method: 'GET', url: '/quests/', headers: tenant.headers({ twin: 'nope' }) }), 400, { header: 'X-Twin' });
    });

    it('403 for a twin of another organization, and for one that does not exist', async () => {
      expectError(await service.inject({ method: 'GET', url: '/quests/', headers: tenant.headers({ twin: other.twinId }) }), 403, { header: 'X-Twin' });
      expectError(
        await service.inject({ method: 'GET', url: '/events/', headers: tenant.headers({ twin: '00000000-0000-4000-8000-000000000000' }) }),
        403,
        { header: 'X-Twin' },
      );
    });

    it('the own twin is accepted', async () => {
      expect((await service.inject({ method: 'GET', url: '/quests/', headers: tenant.headers({ twin: true }) })).statusCode).toBe(200);
    });
  });

  describe('organizations', () => {
    it('lists only the caller’s organizations, paginated, with microsecond timestamps', async () => {
      const response = await service.inject({ method: 'GET', url: '/organizations/', headers: tenant.headers() });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/vnd\.api\+json/);
      const body = response.json();
      expect(body.data).toEqual([
        {
          type: 'organizations',
          id: tenant.organizationId,
          attributes: { name: 'Alpha', created: expect.stringMatching(MICROSECOND_TIMESTAMP), modified: expect.stringMatching(MICROSECOND_TIMESTAMP) },
        },
      ]);
      expect(body.meta).toEqual({ pagination: { page: 1, pages: 1, count: 1 } });
      expect(body.links).toEqual({
        first: 'http://localhost/organizations/?page_number=1',
        last: 'http://localhost/organizations/?page_number=1',
        next: null,
        prev: null,
      });
    });

    it('shows one organization of the caller, and 404 for another’s', async () => {
      const own = await service.inject({ method: 'GET', url: `/organizations/${tenant.organizationId}/`, headers: tenant.headers() });
      expect(own.statusCode).toBe(200);
      expect(own.json().data.id).toBe(tenant.organizationId);
      const foreign = await service.inject({ method: 'GET', url: `/organizations/${other.organizationId}`, headers: tenant.headers() });
      expectError(foreign, 404);
      const malformed = await service.inject({ method: 'GET', url: '/organizations/nope', headers: tenant.headers() });
      expectError(malformed, 404);
    });

    it('X-Organization is optional when listing one’s organizations', async () => {
      const response = await service.inject({ method: 'GET', url: '/organizations', headers: { authorization: `Token ${tenant.token}` } });
      expect(response.statusCode).toBe(200);
      expect(response.json().data).toHaveLength(1);
    });
  });

  describe('pagination', () => {
    let member: { token: string; organizationIds: string[] };

    beforeAll(async () => {
      const organizationIds: string[] = [];
      for (const name of ['P1', 'P2', 'P3']) {
        const created = await service.inject({ method: 'POST', url: '/admin/organizations/', headers: admin, payload: document({ type: 'organizations', attributes: { name } }) });
        organizationIds.push(created.json().data.id);
      }
      const account = await service.inject({
        method: 'POST',
        url: '/admin/accounts/',
        headers: admin,
        payload: document({
          type: 'accounts',
          attributes: { name: 'Pager' },
          relationships: { organizations: { data: organizationIds.map((id) => ({ type: 'organizations', id })) } },
        }),
      });
      const token = await service.inject({ method: 'POST', url: `/admin/accounts/${account.json().data.id}/tokens/`, headers: admin });
      member = { token: token.json().data.attributes.token, organizationIds };
    });

    it('links keep other parameters and page through the list', async () => {
      const headers = { authorization: `Token ${member.token}` };
      const first = await service.inject({ method: 'GET', url: '/organizations/?page_size=2', headers });
      expect(first.statusCode).toBe(200);
      const body = first.json();
      expect(body.meta.pagination).toEqual({ page: 1, pages: 2, count: 3 });
      expect(body.data.map((o: { id: string }) => o.id)).toEqual(member.organizationIds.slice(0, 2));
      expect(body.links).toEqual({
        first: 'http://localhost/organizations/?page_size=2&page_number=1',
        last: 'http://localhost/organizations/?page_size=2&page_number=2',
        next: 'http://localhost/organizations/?page_size=2&page_number=2',
        prev: null,
      });
      const second = await service.inject({ method: 'GET', url: '/organizations/?page_size=2&page_number=2', headers });
      expect(second.json().data.map((o: { id: string }) => o.id)).toEqual(member.organizationIds.slice(2));
      expect(second.json().links.prev).toBe('http://localhost/organizations/?page_size=2&page_number=1');
      expect(second.json().links.next).toBeNull();
    });

    it('404 past the last page', async () => {
      const response = await service.inject({ method: 'GET', url: '/organizations/?page_size=2&page_number=3', headers: { authorization: `Token ${member.token}` } });
      expectError(response, 404);
    });

    it.each([['page_number=0'], ['page_number=abc'], ['page_size=0'], ['page_size=101'], ['page_number=99999999999999999999']])('400 naming the parameter for %s', async (query) => {
      const response = await service.inject({ method: 'GET', url: `/organizations/?${query}`, headers: { authorization: `Token ${member.token}` } });
      expectError(response, 400, { parameter: query.split('=')[0] });
    });

    it('400 for an unknown query parameter', async () => {
      const response = await service.inject({ method: 'GET', url: '/organizations/?colour=red', headers: { authorization: `Token ${member.token}` } });
      expectError(response, 400, { parameter: 'colour' });
    });
  });

  describe('admin API', () => {
    it('creates an organization (201)', async () => {
      const response = await service.inject({ method: 'POST', url: '/admin/organizations/', headers: admin, payload: document({ type: 'organizations', attributes: { name: 'Gamma' } }) });
      expect(response.statusCode).toBe(201);
      expect(response.json()).toEqual({
        data: {
          type: 'organizations',
          id: expect.any(String),
          attributes: { name: 'Gamma', created: expect.stringMatching(MICROSECOND_TIMESTAMP), modified: expect.stringMatching(MICROSECOND_TIMESTAMP) },
        },
      });
    });

    it('needs the admin token', async () => {
      const body = document({ type: 'organizations', attributes: { name: 'X' } });
      expectError(await service.inject({ method: 'POST', url: '/admin/organizations/', headers: { 'content-type': JSON_API }, payload: body }), 401);
      expectError(await service.inject({ method: 'POST', url: '/admin/organizations/', headers: { ...admin, authorization: `Token ${tenant.token}` }, payload: body }), 401);
    });

    it('creates an account in organizations and mints a working token', async () => {
      const account = await service.inject({
        method: 'POST',
        url: '/admin/accounts/',
        headers: admin,
        payload: document({
          type: 'accounts',
          attributes: { name: 'Grace' },
          relationships: { organizations: { data: [{ type: 'organizations', id: tenant.organizationId }] } },
        }),
      });
      expect(account.statusCode).toBe(201);
      expect(account.json().data).toEqual({
        type: 'accounts',
        id: expect.any(String),
        attributes: { name: 'Grace', created: expect.any(String), modified: expect.any(String) },
        relationships: { organizations: { data: [{ type: 'organizations', id: tenant.organizationId }] } },
      });
      const minted = await service.inject({
        method: 'POST',
        url: `/admin/accounts/${account.json().data.id}/tokens/`,
        headers: admin,
        payload: document({ type: 'tokens', attributes: { expires: '2099-01-01T00:00:00Z' } }),
      });
      expect(minted.statusCode).toBe(201);
      const token = minted.json().data;
      expect(token).toEqual(
        expect.objectContaining({
          type: 'tokens',
          id: expect.any(String),
          attributes: { token: expect.stringMatching(/^tw_[A-Za-z0-9_-]{43}$/), created: expect.stringMatching(MICROSECOND_TIMESTAMP), expires: '2099-01-01T00:00:00.000000Z' },
        }),
      );
      const used = await service.inject({ method: 'GET', url: '/organizations/', headers: { authorization: `Token ${token.attributes.token}`, 'x-organization': tenant.organizationId } });
      expect(used.statusCode).toBe(200);
    });

    it('stores only a hash of the token', async () => {
      const rows: { token_hash: Buffer }[] = await service.app.get(DataSource).query('SELECT token_hash FROM access_tokens WHERE id = $1', [tenant.tokenId]);
      expect(rows[0].token_hash).toHaveLength(32);
      expect(rows[0].token_hash.toString('utf8')).not.toContain(tenant.token);
    });

    it('404 for an account in an organization that does not exist', async () => {
      const response = await service.inject({
        method: 'POST',
        url: '/admin/accounts/',
        headers: admin,
        payload: document({
          type: 'accounts',
          attributes: { name: 'Nobody' },
          relationships: { organizations: { data: [{ type: 'organizations', id: '00000000-0000-4000-8000-000000000000' }] } },
        }),
      });
      expectError(response, 404, { pointer: '/data/relationships/organizations/data/0' });
    });

    it('404 minting a token for an unknown account', async () => {
      expectError(await service.inject({ method: 'POST', url: '/admin/accounts/00000000-0000-4000-8000-000000000000/tokens/', headers: admin }), 404);
    });

    it('an expired token is refused', async () => {
      await service.dataSource.query(`UPDATE access_tokens SET expires = now() - interval '1 second' WHERE account_id = $1`, [other.accountId]);
      const response = await service.inject({ method: 'GET', url: '/organizations/', headers: other.headers() });
      expectError(response, 401);
      await service.dataSource.query(`UPDATE access_tokens SET expires = NULL WHERE account_id = $1`, [other.accountId]);
    });

    it('revokes a token at once (204), then 404 for it', async () => {
      const victim = await service.tenant();
      expect((await service.inject({ method: 'GET', url: '/organizations/', headers: victim.headers() })).statusCode).toBe(200);
      const revoked = await service.inject({ method: 'DELETE', url: `/admin/tokens/${victim.tokenId}`, headers: { authorization: `Token ${ADMIN_TOKEN}` } });
      expect(revoked.statusCode).toBe(204);
      expect(revoked.body).toBe('');
      expectError(await service.inject({ method: 'GET', url: '/organizations/', headers: victim.headers() }), 401);
      expectError(await service.inject({ method: 'DELETE', url: `/admin/tokens/${victim.tokenId}/`, headers: { authorization: `Token ${ADMIN_TOKEN}` } }), 404);
    });
  });

  describe('request documents', () => {
    const post = (payload: string | undefined, contentType = JSON_API) =>
      service.inject({ method: 'POST', url: '/admin/organizations/', headers: { ...admin, 'content-type': contentType }, payload });

    it('accepts application/json too', async () => {
      expect((await post(document({ type: 'organizations', attributes: { name: 'J' } }), 'application/json')).statusCode).toBe(201);
    });

    it('415 for another media type', async () => {
      const error = expectError(await post('name=x', 'application/x-www-form-urlencoded'), 415);
      expect(error.code).toBe('unsupported_media_type');
    });

    it('400 for malformed JSON', async () => {
      expect(expectError(await post('{"data": '), 400).code).toBe('invalid_json');
    });

    it('413 over the body limit', async () => {
      const huge = document({ type: 'organizations', attributes: { name: 'x'.repeat(1024 * 1024 + 10) } });
      expect(expectError(await post(huge), 413).code).toBe('payload_too_large');
    });

    it('400 with a pointer for each invalid attribute', async () => {
      const response = await post(document({ type: 'organizations', attributes: { name: 5, colour: 'red' } }));
      expectError(response, 400);
      const pointers = response.json().errors.map((e: { source: { pointer: string } }) => e.source.pointer).sort();
      expect(pointers).toEqual(['/data/attributes/colour', '/data/attributes/name']);
    });

    it('400 without data, 409 for the wrong type, 403 for a client-generated id', async () => {
      expectError(await post(JSON.stringify({ name: 'x' })), 400, { pointer: '/data' });
      expectError(await post(document({ type: 'twins', attributes: { name: 'x' } })), 409, { pointer: '/data/type' });
      expectError(await post(document({ type: 'organizations', id: 'abc', attributes: { name: 'x' } })), 403, { pointer: '/data/id' });
    });
  });

  describe('routing', () => {
    it('trailing slashes are optional', async () => {
      for (const url of ['/organizations', '/organizations/', `/organizations/${tenant.organizationId}`, `/organizations/${tenant.organizationId}/`]) {
        expect((await service.inject({ method: 'GET', url, headers: tenant.headers() })).statusCode).toBe(200);
      }
    });

    it('404 errors document for an unknown path', async () => {
      expectError(await service.inject({ method: 'GET', url: '/no/such/path', headers: tenant.headers() }), 404);
    });

    it('405 with Allow for a known path and another method', async () => {
      const response = await service.inject({ method: 'PUT', url: '/organizations/', headers: tenant.headers() });
      expectError(response, 405);
      expect(response.headers.allow).toBe('GET');
    });
  });

  describe('rate limits', () => {
    it('RateLimit and RateLimit-Policy on counted answers; 429 errors document with Retry-After once the token’s budget is spent', async () => {
      const limited = await TestApp.start({ RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_MS: '60000' });
      try {
        const who = await limited.tenant();
        const first = await limited.inject({ method: 'GET', url: '/organizations/', headers: who.headers() });
        expect(first.statusCode).toBe(200);
        expect(first.headers['ratelimit-policy']).toBe('"token";q=2;w=60');
        expect(first.headers.ratelimit).toBe('"token";r=1;t=60');
        const second = await limited.inject({ method: 'GET', url: '/organizations/', headers: who.headers() });
        expect(second.statusCode).toBe(200);
        expect(second.headers.ratelimit).toMatch(/^"token";r=0;t=(59|60)$/);
        const response = await limited.inject({ method: 'GET', url: '/organizations/', headers: who.headers() });
        expectError(response, 429);
        const retryAfter = Number(response.headers['retry-after']);
        expect([59, 60]).toContain(retryAfter);
        expect(response.json()).toEqual({
          errors: [{ status: '429', code: 'rate_limited', title: 'Too many requests', detail: `Rate limit exceeded; retry in ${retryAfter} s.` }],
        });
        expect(response.headers['ratelimit-policy']).toBe('"token";q=2;w=60');
        expect(response.headers.ratelimit).toBe(`"token";r=0;t=${retryAfter}`);
        // Another token has its own budget; public routes and the admin API are not counted.
        const other = await limited.tenant();
        expect((await limited.inject({ method: 'GET', url: '/organizations/', headers: other.headers() })).headers.ratelimit).toBe('"token";r=1;t=60');
        const health = await limited.inject({ method: 'GET', url: '/health' });
        expect(health.statusCode).toBe(200);
        expect(health.headers.ratelimit).toBeUndefined();
        expect(health.headers['ratelimit-policy']).toBeUndefined();
        for (let i = 0; i < 3; i++) {
          const created = await limited.inject({ method: 'POST', url: '/admin/organizations/', headers: admin, payload: document({ type: 'organizations', attributes: { name: `Limited ${i}` } }) });
          expect(created.statusCode).toBe(201);
          expect(created.headers.ratelimit).toBeUndefined();
        }
      } finally {
        await limited.close();
      }
    });

    it('RATE_LIMIT_MAX=0: nothing counted, no RateLimit fields', async () => {
      expect(service.config.rateLimitMax).toBe(0);
      for (let i = 0; i < 3; i++) {
        const response = await service.inject({ method: 'GET', url: '/organizations/', headers: tenant.headers() });
        expect(response.statusCode).toBe(200);
        expect(response.headers.ratelimit).toBeUndefined();
        expect(response.headers['ratelimit-policy']).toBeUndefined();
      }
    });
  });

  describe('database outage', () => {
    it('503 errors document within a second while the database is unreachable, then recovers', async () => {
      const proxy = TcpProxy.forUrl(process.env.TEST_DATABASE_URL!);
      await proxy.start();
      const cut = await TestApp.start({ DATABASE_URL: proxy.rewrite(process.env.TEST_DATABASE_URL!) });
      try {
        const who = tenant;
        expect((await cut.inject({ method: 'GET', url: '/organizations/', headers: who.headers() })).statusCode).toBe(200);
        const port = proxy.port;
        await proxy.stop();
        const started = Date.now();
        const response = await cut.inject({ method: 'GET', url: '/organizations/', headers: who.headers() });
        expect(Date.now() - started).toBeLessThan(1500);
        expect(expectError(response, 503).code).toBe('database_unavailable');
        const health = await cut.inject({ method: 'GET', url: '/health' });
        expect(health.statusCode).toBe(503);
        expect(health.json().database.status).toBe('down');
        await proxy.start(port);
        let recovered = 0;
        for (let i = 0; i < 20 && recovered !== 200; i++) {
          recovered = (await cut.inject({ method: 'GET', url: '/organizations/', headers: who.headers() })).statusCode;
          if (recovered !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(recovered).toBe(200);
      } finally {
        await cut.close();
        await proxy.stop();
      }
    });
  });

  describe('frozen database', () => {
    it('503 within the statement timeout when the database stops answering, no hanging request', async () => {
      const proxy = TcpProxy.forUrl(process.env.TEST_DATABASE_URL!);
      await proxy.start();
      const frozen = await TestApp.start({ DATABASE_URL: proxy.rewrite(process.env.TEST_DATABASE_URL!), DATABASE_STATEMENT_TIMEOUT_MS: '500' });
      try {
        expect((await frozen.inject({ method: 'GET', url: '/organizations/', headers: tenant.headers() })).statusCode).toBe(200);
        proxy.freeze();
        // First a write, in a transaction (TypeORM's query runner): it gets the pooled connection the
        // request above left idle, so what bounds it is the read timeout, not the connect timeout.
        const writeStarted = Date.now();
        const write = await frozen.inject({
          method: 'POST',
          url: '/admin/accounts/',
          headers: admin,
          payload: document({ type: 'accounts', attributes: { name: 'Frozen' } }),
        });
        expect(Date.now() - writeStarted).toBeLessThan(3000);
        expect(expectError(write, 503).code).toBe('database_unavailable');
        // That connection is gone; a read now waits for a new one through the frozen proxy.
        const started = Date.now();
        const response = await frozen.inject({ method: 'GET', url: '/organizations/', headers: tenant.headers() });
        expect(Date.now() - started).toBeLessThan(3000);
        expect(expectError(response, 503).code).toBe('database_unavailable');
      } finally {
        await proxy.stop();
        await frozen.close();
      }
    });
  });

  describe('frozen database, noticed', () => {
    // The liveness watch runs beside a real PostgreSQL only (src/database/liveness.ts).
    (embeddedDatabase() ? it.skip : it)('with a long statement timeout: requests in flight answered 503 within seconds, new ones at once, and it recovers by itself', async () => {
      const proxy = TcpProxy.forUrl(process.env.TEST_DATABASE_URL!);
      await proxy.start();
      const frozen = await TestApp.start({ DATABASE_URL: proxy.rewrite(process.env.TEST_DATABASE_URL!), DATABASE_STATEMENT_TIMEOUT_MS: '60000' });
      try {
        expect((await frozen.inject({ method: 'GET', url: '/organizations/', headers: tenant.headers() })).statusCode).toBe(200);
        proxy.freeze();
        const started = Date.now();
        const inFlight = await Promise.all(
          [1, 2, 3].map(() => frozen.inject({ method: 'GET', url: '/organizations/', headers: tenant.headers() })),
        );
        const waited = Date.now() - started;
        // Stall bound (2 s) + probe (1 s) + a check interval, far below the statement timeout (60 s).
        expect({ codes: inFlight.map((r) => expectError(r, 503).code), withinFiveSeconds: waited < 5000 }).toEqual({
          codes: ['database_unavailable', 'database_unavailable', 'database_unavailable'],
          withinFiveSeconds: true,
        });
        const refusedAt = Date.now();
        const refused = await frozen.inject({ method: 'GET', url: '/organizations/', headers: tenant.headers() });
        expect({ code: expectError(refused, 503).code, atOnce: Date.now() - refusedAt < 500 }).toEqual({ code: 'database_unavailable', atOnce: true });
        const health = await frozen.inject({ method: 'GET', url: '/health' });
        expect(health.statusCode).toBe(503);
        proxy.thaw();
        const deadline = Date.now() + 5000;
        let status = 0;
        while (Date.now() < deadline && status !== 200) {
          status = (await frozen.inject({ method: 'GET', url: '/organizations/', headers: tenant.headers() })).statusCode;
          if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(status).toBe(200);
      } finally {
        await proxy.stop();
        await frozen.close();
      }
    });
  });

  describe('busy pool', () => {
    /** Both connections of a pool of two held for 1.5 s, then a request that queues behind them: its answer and wait. */
    async function requestBehindBothConnections(busy: TestApp) {
      const sql = busy.app.get(Sql);
      const caller = await busy.tenant();
      const holding = Promise.all([sql.query('SELECT pg_sleep(1.5)'), sql.query('SELECT pg_sleep(1.5)')]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = Date.now();
      const response = await busy.inject({ method: 'GET', url: '/organizations/', headers: caller.headers() });
      const waited = Date.now() - started;
      await holding;
      return { response, waited, caller };
    }

    // The embedded database has one connection, always waited for; the bound under test is the pool's.
    (embeddedDatabase() ? it.skip : it)('a request waits for a free connection past a second: answered, not refused as an unreachable database', async () => {
      const busy = await TestApp.start({ DATABASE_POOL_SIZE: '2', DATABASE_STATEMENT_TIMEOUT_MS: '5000' });
      try {
        const { response, waited } = await requestBehindBothConnections(busy);
        expect({ status: response.statusCode, waitedPastASecond: waited > 1000 }).toEqual({ status: 200, waitedPastASecond: true });
      } finally {
        await busy.close();
      }
    });

    (embeddedDatabase() ? it.skip : it)('a request that finds no free connection within DATABASE_POOL_WAIT_MS: 503 database_busy with Retry-After', async () => {
      const busy = await TestApp.start({ DATABASE_POOL_SIZE: '2', DATABASE_POOL_WAIT_MS: '300', DATABASE_STATEMENT_TIMEOUT_MS: '5000' });
      try {
        const { response, waited, caller } = await requestBehindBothConnections(busy);
        const error = expectError(response, 503);
        expect({ code: error.code, retryAfter: response.headers['retry-after'], waitedTheBound: waited >= 250 && waited < 1200 }).toEqual({
          code: 'database_busy',
          retryAfter: '1',
          waitedTheBound: true,
        });
        // Once the connections are free again the same request is answered.
        expect((await busy.inject({ method: 'GET', url: '/organizations/', headers: caller.headers() })).statusCode).toBe(200);
      } finally {
        await busy.close();
      }
    });

    // The embedded database's one local connection has no connect bound of its own (data-source-options.ts).
    (embeddedDatabase() ? it.skip : it)('a new connection to a database that stopped answering gives up after a second, whatever the statement timeout', async () => {
      const proxy = TcpProxy.forUrl(process.env.TEST_DATABASE_URL!);
      await proxy.start();
      const frozen = await TestApp.start({ DATABASE_URL: proxy.rewrite(process.env.TEST_DATABASE_URL!), DATABASE_STATEMENT_TIMEOUT_MS: '4000' });
      // The pool's idle connections are taken out of its reach first, so the request must open a new one.
      const pool = (frozen.app.get(DataSource).driver as unknown as { master: Pool }).master;
      const held: PoolClient[] = [];
      try {
        expect((await frozen.inject({ method: 'GET', url: '/organizations/', headers: tenant.headers() })).statusCode).toBe(200);
        while (pool.idleCount > 0) held.push(await pool.connect());
        expect(held.length).toBeLessThan(5);
        proxy.freeze();
        const started = Date.now();
        const response = await frozen.inject({ method: 'GET', url: '/organizations/', headers: tenant.headers() });
        const waited = Date.now() - started;
        expect({ code: expectError(response, 503).code, withinTwoSeconds: waited < 2000 }).toEqual({ code: 'database_unavailable', withinTwoSeconds: true });
      } finally {
        held.forEach((client) => client.release(true));
        await proxy.stop();
        await frozen.close();
      }
    });
  });

  describe('secrets', () => {
    it('never writes tokens to the logs', () => {
      const logs = service.logs.join('\n');
      expect(logs).not.toContain(tenant.token);
      expect(logs).not.toContain(ADMIN_TOKEN);
    });
  });
});
