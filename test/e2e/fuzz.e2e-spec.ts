import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { png } from '../support/images';
import { listRoutes, RouteInfo } from '../support/routes';
import { ADMIN_TOKEN, document, embeddedDatabase, expectError, JSON_API, TestApp } from '../support/test-app';
import { buildWorld, holdHousekeeping, tenantTables, World } from '../support/world';

/**
 * Property-based fuzzing (issue 7, OWASP API4/API8/API10) of every route of the running application:
 * request bodies, query parameters, headers and path ids, built from wrong types, missing and unknown
 * members, huge and deeply nested values, unicode, NUL bytes, SQL/JSON injection strings, bad UUIDs,
 * out-of-range coordinates, page numbers at the integer limits and odd media types.
 *
 * Invariants, per request: never a 5xx; every 4xx is a JSON:API errors document whose members carry a
 * matching status, a code, a title and a detail; and nothing is half-written: the row counts of all
 * tenant tables change only when the answer is a 2xx to a write. Reproduce a run with FUZZ_SEED=<seed>
 * (printed); FUZZ_SCALE=<n> multiplies the number of runs.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20261121);
const SCALE = Number(process.env.FUZZ_SCALE ?? 1);
const WRITES = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);
/** Never end on their own (server-sent events); their refusals are covered by the isolation matrix. */
const STREAMS = new Set(['GET /events/stream']);

const key = (route: RouteInfo) => `${route.method} ${route.path}`;

// ---------------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------------

const INJECTIONS = [
  "' OR '1'='1",
  "'; DROP TABLE twins; --",
  '" OR ""="',
  '1; SELECT pg_sleep(10)',
  "$1'::uuid",
  '\\x00',
  '\u0000',
  'a\u0000b',
  '{"$ne": null}',
  '{"__proto__": {"admin": true}}',
  '__proto__',
  'constructor',
  '${jndi:ldap://x}',
  '<script>alert(1)</script>',
  '../../../../etc/passwd',
  '%00',
  '%',
  '%%',
  '\ud800',
  '\uffff',
  '🧟‍♀️🏳️‍🌈',
  'ﷺ'.repeat(300),
  'Ω'.repeat(256),
  ' ',
  '',
  'null',
  'true',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  '0x1F',
  '9007199254740993',
  '2147483648',
  '-2147483649',
  '18446744073709551616',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '00000000-0000-4000-8000-00000000000g',
  '{00000000-0000-4000-8000-000000000000}',
  '00000000000040008000000000000000',
  '-180.0000001,-90',
  '181,91',
  '0,0,0,0',
  '1,2,3',
  '-181,-91,181,91',
  '1e308,1e308',
  'distance',
  '2026-02-30T25:61:61Z',
  '0000-01-01',
  '275760-09-13T00:00:00Z',
  '2026-11-21T19:26:03.1234567Z',
  'a'.repeat(1001),
  'x,'.repeat(60),
];

const INTEGER_LIMITS = ['0', '1', '-1', '2147483647', '2147483648', '4294967296', '9007199254740991', '9007199254740992', '9999999999', '99999999999', '1.5', '1e3', '01', ' 1', '+1', '100', '101', '10000', '10001', '100001'];

const text = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...INJECTIONS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom(...INTEGER_LIMITS) },
  { weight: 1, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: fc.integer({ min: 256, max: 70_000 }).map((n) => 'x'.repeat(n)) },
);

/**
 * Nested arrays/objects `depth` levels deep. Kept as a marker string and written out only when the body
 * is serialised, so the test's own (recursive) cloning never meets the nesting.
 */
const DEEP = /"__deep_(\d+)_(array|object)__"/g;
const deep = fc.tuple(fc.integer({ min: 10, max: 100_000 }), fc.boolean()).map(([depth, asObject]) => `__deep_${depth}_${asObject ? 'object' : 'array'}__`);

const numberish = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, -1, 2 ** 31, 2 ** 53, -(2 ** 53), 1e308, -1e308, 180.0000001, -90.0000001, 91, 181, Number.MAX_VALUE, Number.MIN_VALUE),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((n) => Number(n)),
);

const geometry = fc.oneof(
  fc.record({ type: fc.constantFrom('Point', 'point', 'LineString', 'Polygon', 'Feature'), coordinates: fc.array(numberish, { maxLength: 4 }) }),
  fc.record({ type: fc.constant('Point'), coordinates: fc.tuple(numberish, numberish) }),
  fc.record({ type: fc.constant('Point'), coordinates: fc.array(fc.array(numberish, { maxLength: 3 }), { maxLength: 3 }) }),
  fc.constant({ type: 'Point' }),
);

/** Any JSON value, weighted towards the troublesome ones. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: text },
  { weight: 2, arbitrary: numberish },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, {}, [], [null], { data: null }) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.array(text, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(text, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }) },
  { weight: 1, arbitrary: geometry },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 20_000 }).map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))) },
);

const CONTENT_TYPES = [
  JSON_API,
  'application/json',
  'application/vnd.api+json; charset=utf-8',
  'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"',
  'application/json; charset=utf-16',
  'APPLICATION/JSON',
  'text/plain',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'image/png',
  'image/svg+xml',
  'application/geo+json',
  '',
  '*/*',
  'application/vnd.api+json, text/html',
];

// ---------------------------------------------------------------------------------------------------
// The world under test: valid requests for each route, mutated by the generators
// ---------------------------------------------------------------------------------------------------

/** A valid body for each write, so mutations land deep inside the document, not only on its shell. */
function validBody(route: RouteInfo, w: World, pathId: string | undefined): unknown {
  switch (key(route)) {
    case 'POST /admin/organizations':
      return { data: { type: 'organizations', attributes: { name: 'fuzz' } } };
    case 'POST /admin/accounts':
      return { data: { type: 'accounts', attributes: { name: 'fuzz' }, relationships: { organizations: { data: [{ type: 'organizations', id: w.organizationId }] } } } };
    case 'POST /admin/accounts/:accountId/tokens':
      return { data: { type: 'tokens', attributes: { expires: '2099-01-01T00:00:00Z' } } };
    case 'POST /events':
      return { data: { type: 'events', attributes: { name: 'fuzz', category: 'fuzz', data: { a: 1 } } } };
    case 'PATCH /events/:id':
      return { data: { type: 'events', id: pathId, attributes: { name: 'fuzz', data: { a: null, b: 2 } } } };
    case 'DELETE /events/:id':
      return { data: { type: 'events', id: pathId } };
    case 'POST /my/twins':
      return {
        data: {
          type: 'twins',
          attributes: {
            name: 'fuzz',
            description: 'fuzz',
            public: false,
            location: { type: 'Point', coordinates: [2.35, 48.85] },
            personality: { characteristics: ['a'], services: [] },
            connections: [w.siblingTwinId],
            tags: ['t'],
            'meta-data': { a: 1 },
            'opening-hours': { weekday_text: ['Monday: 9–5'] },
            'phone-number': '+1',
            website: 'https://example.com',
          },
        },
      };
    case 'PATCH /my/twins/:id':
      return { data: { type: 'twins', id: pathId, attributes: { description: 'fuzz', location: null, personality: { characteristics: ['b'] } } } };
    case 'POST /quests':
      return { data: { type: 'quests', attributes: { name: 'fuzz', summary: 's', description: 'd', price: '1.25', 'summary-image': w.privateImageId } } };
    case 'PATCH /quests/:questId':
      return { data: { type: 'quests', id: pathId, attributes: { summary: 'fuzz', price: 3, public: false, 'summary-image': null } } };
    case 'POST /quests/:questId/tasks':
      return { data: { type: 'tasks', attributes: { name: 'fuzz', description: 'd', position: 2 }, relationships: { place: { data: { type: 'twins', id: w.siblingTwinId } } } } };
    default:
      return undefined;
  }
}

/** The caller's own ids for each path parameter (the isolation matrix aims at other organizations'). */
function ownIds(param: string, route: RouteInfo, w: World): string[] {
  switch (param) {
    case 'accountId':
      return [w.accountId];
    case 'tokenId':
      return [w.secondTokenId];
    case 'organizationId':
      return [w.organizationId];
    case 'imageId':
      return [w.privateImageId, w.publicImageId];
    case 'questId':
      return [w.privateQuestId, w.publicQuestId, w.copyQuestId];
    case 'id':
      return route.path.startsWith('/events') ? w.eventIds : [w.twinId, w.siblingTwinId];
    case 'z':
      // A tile's z/x/y, filled at once (pathFor): the one of the world's twins (13.4, 52.5), zoom 0, and one past the pyramid.
      return ['14/8801/5374', '0/0/0', '23/0/0'];
    case 'asset':
      return ['map.js', 'countries.geojson', 'no-such-file.js'];
    default:
      throw new Error(`fuzz: no ids for :${param} on ${key(route)}`);
  }
}

const QUERY_NAMES = [
  'page_number',
  'page_size',
  'page[number]',
  'page[size]',
  'name',
  'category',
  'since',
  'until',
  'description',
  'owned_by',
  'is_original',
  'original',
  'is_public',
  'is_personal',
  'is_supplier',
  'is_connection',
  'organization',
  'characteristics',
  'personality',
  'in_bbox',
  'point',
  'dist',
  'ordering',
  'filter[name]',
  'include',
  'fields[twins]',
  'sort',
  '__proto__',
  'constructor',
];

type Mutation = (body: unknown) => unknown;

/** Sets, deletes or replaces one member of the body at a random path. */
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.tuple(fc.nat(), anyValue).map(([pick, value]) => (body: unknown) => replaceAt(body, pick, value, 'set')),
  fc.nat().map((pick) => (body: unknown) => replaceAt(body, pick, undefined, 'delete')),
  fc.tuple(fc.nat(), text, anyValue).map(([pick, name, value]) => (body: unknown) => replaceAt(body, pick, { [name]: value }, 'merge')),
  anyValue.map((value) => () => value),
  anyValue.map((value) => () => ({ data: value })),
);

function paths(value: unknown, prefix: string[] = [], out: string[][] = []): string[][] {
  out.push(prefix);
  if (value && typeof value === 'object' && prefix.length < 6) {
    for (const [name, child] of Object.entries(value)) paths(child, [...prefix, name], out);
  }
  return out;
}

function replaceAt(body: unknown, pick: number, value: unknown, how: 'set' | 'delete' | 'merge'): unknown {
  const copy = structuredClone(body);
  const all = paths(copy).filter((p) => p.length > 0);
  if (all.length === 0) return value;
  const path = all[pick % all.length];
  let parent = copy as Record<string, unknown>;
  for (const segment of path.slice(0, -1)) parent = parent[segment] as Record<string, unknown>;
  const last = path[path.length - 1];
  if (how === 'delete') delete parent[last];
  else if (how === 'merge' && parent[last] && typeof parent[last] === 'object' && !Array.isArray(parent[last])) Object.assign(parent[last] as object, value);
  else parent[last] = value;
  return copy;
}

const safeJson = (value: unknown): string =>
  (JSON.stringify(value) ?? 'null').replace(DEEP, (_m, depth: string, kind: string) =>
    kind === 'array' ? '['.repeat(Number(depth)) + '1' + ']'.repeat(Number(depth)) : '{"a":'.repeat(Number(depth)) + '1' + '}'.repeat(Number(depth)),
  );

/** Percent-encodes the UTF-8 bytes (lone surrogates included), or now and then sends the text almost raw. */
const encode = (value: string, raw: boolean): string =>
  // eslint-disable-next-line no-control-regex -- control characters are what gets encoded
  raw ? value.replace(/[\s#&?\u0000-\u001f\u007f-\uffff]/g, (c) => encodeURIComponent(c.replace(/[\ud800-\udfff]/g, '\ufffd'))) : [...Buffer.from(value, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

/**
 * Header values a client can really send: what the HTTP parser hands over is Latin-1 without control
 * characters (UTF-8 arrives as its bytes, one character each).
 */
const headerValue = fc.oneof(
  // eslint-disable-next-line no-control-regex -- what an HTTP parser refuses
  text.map((s) => Buffer.from(s.slice(0, 8000), 'utf8').toString('latin1').replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, '').trim()),
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 60 }),
);

// ---------------------------------------------------------------------------------------------------

describe('fuzzing every route: no 5xx, JSON:API errors documents, nothing half-written', () => {
  let service: TestApp;
  let world: World;
  let routes: RouteInfo[];
  let countsSql: string;
  let counts: string;
  let requests = 0;
  let serverErrors = 0;
  const statuses = new Map<number, number>();
  const timeByRoute = new Map<string, { n: number; ms: number }>();
  const started = Date.now();

  beforeAll(async () => {
    // Batches run concurrently: on PostgreSQL give them connections (the embedded database has one).
    service = await TestApp.start(embeddedDatabase() ? {} : { DATABASE_POOL_SIZE: '10' });
    world = await buildWorld(service, 'F');
    await holdHousekeeping(service);
    routes = listRoutes(service.app).filter((route) => !STREAMS.has(key(route)));
    const tables = await tenantTables(service);
    countsSql = `SELECT concat_ws(',', ${tables.map(({ table }) => `(SELECT count(*) FROM "${table}")`).join(', ')}) AS counts`;
    counts = await readCounts();
  }, 60_000);

  afterAll(async () => {
    const byStatus = [...statuses.entries()].sort(([a], [b]) => a - b).map(([status, n]) => `${status}:${n}`).join(' ');
    const slowest = [...timeByRoute.entries()].sort(([, a], [, b]) => b.ms - a.ms).slice(0, 6).map(([route, t]) => `${route} ${t.n}×${(t.ms / t.n).toFixed(1)}ms`);
    process.stdout.write(`fuzz: slowest routes ${slowest.join(', ')}\n`);
    process.stdout.write(`fuzz: ${requests} requests, ${serverErrors} 5xx, seed ${SEED}, ${((Date.now() - started) / 1000).toFixed(1)} s; statuses ${byStatus}\n`);
    await service?.close();
  });

  const readCounts = async () => ((await service.dataSource.query(countsSql)) as { counts: string }[])[0].counts;

  const ownHeaders = (route: RouteInfo): Record<string, string> => {
    if (route.access.public) return {};
    if (route.access.admin) return { authorization: `Token ${ADMIN_TOKEN}` };
    return world.tenant.headers({ twin: route.access.twin ? world.twinId : undefined });
  };

  /** Sends one request and checks the invariants of its answer (throws on a violation). */
  const check = async (route: RouteInfo, options: InjectOptions): Promise<LightMyRequestResponse> => {
    requests++;
    const t0 = performance.now();
    const response = await service.inject(options);
    const spent = timeByRoute.get(key(route)) ?? { n: 0, ms: 0 };
    spent.n++;
    spent.ms += performance.now() - t0;
    timeByRoute.set(key(route), spent);
    const status = response.statusCode;
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    const where = `${options.method} ${String(options.url).slice(0, 300)} (${key(route)}) → ${status}`;
    if (status >= 500) {
      serverErrors++;
      throw new Error(`${where}: server error ${response.body.slice(0, 300)}; request body ${String(options.payload ?? '').slice(0, 300)}`);
    }
    if (status >= 400) {
      if (!/^application\/vnd\.api\+json/.test(String(response.headers['content-type']))) throw new Error(`${where}: content-type ${response.headers['content-type']}`);
      const body = response.json() as { errors?: unknown };
      if (!Array.isArray(body.errors) || body.errors.length === 0) throw new Error(`${where}: not an errors document: ${response.body.slice(0, 200)}`);
      for (const error of body.errors as Record<string, unknown>[]) {
        if (error.status !== String(status) || typeof error.code !== 'string' || typeof error.title !== 'string' || typeof error.detail !== 'string') {
          throw new Error(`${where}: malformed error object ${JSON.stringify(error).slice(0, 200)}`);
        }
      }
    }
    return response;
  };

  /**
   * A batch of requests sent concurrently (as clients do), each checked, then one SQL reading the row
   * counts of every tenant table: they may change only when some answer of the batch was a 2xx write.
   */
  const batch = async (route: RouteInfo, requestsOfBatch: InjectOptions[]) => {
    const responses = await Promise.all(requestsOfBatch.map((options) => check(route, options)));
    const wrote = responses.some((response, i) => response.statusCode < 300 && WRITES.has(String(requestsOfBatch[i].method)));
    const now = await readCounts();
    if (now !== counts && !wrote) {
      throw new Error(`${key(route)}: row counts changed though no request of the batch was a successful write (${counts} → ${now}): ${responses.map((r) => r.statusCode).join(',')}`);
    }
    counts = now;
  };

  const BATCH = 10;
  /** Property over batches of requests for one route; `total` requests in all (times FUZZ_SCALE). */
  const fuzz = (route: RouteInfo, request: fc.Arbitrary<InjectOptions>, total: number) =>
    fc.assert(
      fc.asyncProperty(fc.array(request, { minLength: BATCH, maxLength: BATCH }), (options) => batch(route, options)),
      { numRuns: Math.max(1, Math.round((total * SCALE) / BATCH)), seed: SEED, endOnFailure: true },
    );

  const pathFor = (route: RouteInfo, id: string | undefined) =>
    id === undefined ? route.path : route.path.includes(':z/:x/:y') ? route.path.replace(':z/:x/:y', id) : route.path.replace(/:\w+/, encode(id, false));
  const pathIds = (route: RouteInfo) => {
    const param = /:(\w+)/.exec(route.path)?.[1];
    return param ? fc.constantFrom(...ownIds(param, route, world)) : fc.constant(undefined);
  };
  const method = (route: RouteInfo) => route.method as InjectOptions['method'];

  it('request bodies of every write', async () => {
    const writes = routes.filter((route) => WRITES.has(route.method));
    expect(writes.length).toBeGreaterThan(5);
    for (const route of writes) {
      const request = fc
        .tuple(pathIds(route), fc.array(mutation, { minLength: 1, maxLength: 3 }), fc.constantFrom(...CONTENT_TYPES), fc.nat(9))
        .map(([id, mutations, contentType, odd]): InjectOptions => {
          const raw = route.path === '/images' ? undefined : validBody(route, world, id);
          const body = mutations.reduce((value, mutate) => mutate(value), raw);
          let payload: string | Buffer = safeJson(body);
          // Now and then: an image body, raw garbage, or truncated JSON.
          if (route.path === '/images' || odd === 0) payload = odd % 2 === 0 ? png(1 + odd, 1) : Buffer.from(payload).subarray(0, 40);
          if (odd === 1) payload = payload.slice(0, Math.max(0, payload.length - 3));
          return {
            method: method(route),
            url: pathFor(route, id),
            headers: { ...ownHeaders(route), 'content-type': odd === 2 && route.path === '/images' ? 'image/png' : contentType },
            payload,
          };
        });
      await fuzz(route, request, route.path.startsWith('/admin/') ? 200 : 400);
    }
  }, 600_000);

  it('query parameters of every route', async () => {
    const entry = fc.tuple(fc.oneof(fc.constantFrom(...QUERY_NAMES), text), fc.oneof(text, fc.constantFrom(...INTEGER_LIMITS)));
    for (const route of routes) {
      const request = fc.tuple(pathIds(route), fc.array(entry, { minLength: 1, maxLength: 4 }), fc.boolean(), fc.boolean()).map(([id, entries, geo, raw]): InjectOptions => {
        const query = entries.map(([name, value]) => `${encode(name, raw)}=${encode(value, raw)}`).join('&');
        const body = validBody(route, world, id);
        return {
          method: method(route),
          url: `${pathFor(route, id)}?${query}`,
          headers: { ...ownHeaders(route), ...(geo && route.path === '/twins' ? { accept: 'application/geo+json' } : {}), ...(body ? { 'content-type': JSON_API } : {}) },
          ...(body ? { payload: safeJson(body) } : {}),
        };
      });
      await fuzz(route, request, route.method === 'GET' ? 180 : 30);
    }
  }, 600_000);

  it('headers of every route', async () => {
    const names = ['authorization', 'x-organization', 'x-twin', 'idempotency-key', 'if-none-match', 'last-event-id', 'accept', 'content-type', 'x-request-id', 'origin', 'x-forwarded-host', 'x-forwarded-proto', 'accept-encoding'];
    for (const route of routes) {
      const request = fc.tuple(pathIds(route), fc.dictionary(fc.constantFrom(...names), headerValue, { minKeys: 1, maxKeys: 3 })).map(([id, headers]): InjectOptions => {
        const merged = { ...ownHeaders(route), ...headers };
        // Half of the fuzzed Authorization values keep the scheme, so the token itself is fuzzed too.
        if (headers.authorization !== undefined && headers.authorization.length % 2 === 0) merged.authorization = `Token ${headers.authorization}`;
        const body = validBody(route, world, id);
        return { method: method(route), url: pathFor(route, id), headers: { ...(body ? { 'content-type': JSON_API } : {}), ...merged }, ...(body ? { payload: safeJson(body) } : {}) };
      });
      await fuzz(route, request, 60);
    }
  }, 600_000);

  it('path ids of every route with a parameter', async () => {
    const garbage = fc.oneof(
      fc.uuid(),
      fc.constantFrom(...INJECTIONS.filter((s) => s.length > 0 && s.length < 200)),
      fc.string({ minLength: 1, maxLength: 60 }),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
    );
    for (const route of routes.filter((r) => r.path.includes(':'))) {
      const request = garbage.map((id): InjectOptions => {
        const body = validBody(route, world, id);
        return { method: method(route), url: pathFor(route, id), headers: { ...ownHeaders(route), ...(body ? { 'content-type': JSON_API } : {}) }, ...(body ? { payload: safeJson(body) } : {}) };
      });
      await fuzz(route, request, 60);
    }
  }, 600_000);

  describe('regressions found by fuzzing (each was a 500)', () => {
    const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    const post = (url: string, payload: string, headers: Record<string, string>) => service.inject({ method: 'POST', url, headers: { ...headers, 'content-type': JSON_API }, payload });

    it('a deeply nested document is a 400 with a pointer, not a stack overflow', async () => {
      const events = world.tenant.headers({ twin: true });
      const deepData = `{"data":{"type":"events","attributes":{"name":"n","category":"c","data":${nested(100_000)}}}}`;
      const error = expectError(await post('/events/', deepData, events), 400);
      expect(error.detail).toContain('nested more than 64 levels');
      const deepToken = `{"data":{"type":"tokens","attributes":{"expires":${nested(20_000)}}}}`;
      expectError(await post(`/admin/accounts/${world.accountId}/tokens/`, deepToken, { authorization: `Token ${ADMIN_TOKEN}` }), 400);
      // 60 levels of event data is fine.
      const fine = `{"data":{"type":"events","attributes":{"name":"n","category":"c","data":${nested(58)}}}}`;
      expect((await post('/events/', fine, events)).statusCode).toBe(201);
    });

    it.each([
      ['NUL in a text attribute', '/events/', { type: 'events', attributes: { name: 'a\u0000b', category: 'c', data: {} } }, '/data/attributes/name'],
      ['NUL in JSON data', '/events/', { type: 'events', attributes: { name: 'a', category: 'c', data: { k: '\u0000' } } }, '/data/attributes/data/k'],
      ['an unpaired surrogate in JSON data', '/events/', { type: 'events', attributes: { name: 'a', category: 'c', data: { k: ['\ud800'] } } }, '/data/attributes/data/k/0'],
      ['an unpaired surrogate in a member name', '/my/twins/', { type: 'twins', attributes: { name: 'a', 'meta-data': { '\udc00': 1 } } }, '/data/attributes/meta-data/\udc00'],
      ['NUL in a twin name', '/my/twins/', { type: 'twins', attributes: { name: 'a\u0000' } }, '/data/attributes/name'],
      ['NUL in a quest name', '/quests/', { type: 'quests', attributes: { name: 'a\u0000' } }, '/data/attributes/name'],
    ])('%s is a 400 naming the member, and nothing is stored', async (_what, url, data, pointer) => {
      const before = await readCounts();
      expectError(await post(url, document(data), world.tenant.headers({ twin: true })), 400, { pointer });
      expect(await readCounts()).toBe(before);
    });

    it('NUL in an admin document is a 400', async () => {
      expectError(await post('/admin/organizations/', document({ type: 'organizations', attributes: { name: '\u0000' } }), { authorization: `Token ${ADMIN_TOKEN}` }), 400, {
        pointer: '/data/attributes/name',
      });
    });

    it('well-formed unicode (astral characters, paired surrogates) is still accepted', async () => {
      const response = await post('/events/', document({ type: 'events', attributes: { name: '🧟‍♀️ 𝄞 ﷺ', category: 'Ω', data: { '🏳️‍🌈': '𝄞' } } }), world.tenant.headers({ twin: true }));
      expect(response.statusCode).toBe(201);
      expect(response.json().data.attributes.data).toEqual({ '🏳️‍🌈': '𝄞' });
    });
  });

  it('made at least 10,000 requests and saw no 5xx', () => {
    if (SCALE >= 1) expect(requests).toBeGreaterThanOrEqual(10_000);
    expect(serverErrors).toBe(0);
  });
});
