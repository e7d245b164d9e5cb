// The hand-written baseline of the OGC API's items route, the yardstick bench/ogc.mjs measures the
// service against: `GET /ogc/collections/twins/items`. Like bench/raw-server.mjs it shares NO code with
// the service (nothing from src/ or dist/): plain Fastify + pg + node builtins, its own SQL over the same
// schema, written from the API's contract (docs/MAPS.md, "OGC API – Features"). It answers what the
// bench asks, the same documents as the service (bench/ogc.mjs compares them before it measures):
// `bbox`, `limit`, `properties`, a `page_after` cursor (signed as the service signs it, CURSOR_SECRET),
// and a `filter` of the one CQL2 form the bench sends, `S_INTERSECTS(geometry, POLYGON((…)))`.
//
// How it is fast, and why each is fair game for the service too:
// - one statement per request, authentication included (token hash, revoked/expired, membership of
//   X-Organization: a CTE of the statement), as a named prepared statement;
// - the page is one more row than asked (whether a next page exists), read in `id` order from the
//   position: the primary key's range scan, or the spatial index for a box or a polygon;
// - the features are JSON built by PostgreSQL (json_build_object), in rows of 100 (25 with every
//   property) that Node joins: one long row makes pg grow its read buffer step by step.
//
//   DATABASE_URL=… PORT=… CURSOR_SECRET=… node bench/raw-ogc.mjs
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(join(dirname(fileURLToPath(import.meta.url)), '../package.json'));
const Fastify = require('fastify');
const { Pool } = require('pg');

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_SIZE ?? 10), application_name: 'twin-bench-raw-ogc', options: '-c TimeZone=UTC' });
const CURSOR_KEY = createHash('sha256').update(process.env.CURSOR_SECRET ?? '').digest();
const SCOPE = 'ogc-twins:id';
const GEO_JSON = 'application/geo+json';
const MAX_LIMIT = 10_000;

const ts = (column) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** A feature's properties: the twin list form's attributes (its location is the geometry) and the organization. */
const PROPERTIES = {
  created: ts('t.created'),
  modified: ts('t.modified'),
  name: 't.name',
  description: 't.description',
  personal: 't.personal',
  connections: 't.connections',
  personality: `json_build_object('id', t.personality_id, 'characteristics', t.characteristics, 'services', t.services)`,
  'meta-data': 't.meta_data',
  'place-id': `coalesce(t.place_id, '')`,
  provider: 't.provider',
  'opening-hours': 't.opening_hours',
  'phone-number': 't.phone_number',
  address: 't.address',
  city: 't.city',
  state: 't.state',
  website: 't.website',
  'provider-info': 't.provider_info',
  organization: 't.organization_id',
};
const COLUMNS = {
  created: ['created'], modified: ['modified'], name: ['name'], description: ['description'], personal: ['personal'], connections: ['connections'],
  personality: ['personality_id', 'characteristics', 'services'], 'meta-data': ['meta_data'], 'place-id': ['place_id'], provider: ['provider'],
  'opening-hours': ['opening_hours'], 'phone-number': ['phone_number'], address: ['address'], city: ['city'], state: ['state'], website: ['website'],
  'provider-info': ['provider_info'], organization: ['organization_id'],
};

/** $1 token hash, $2 X-Organization: no row, an unknown token (401); org null, not a member (403). */
const AUTH = `a AS (
  SELECT m.organization_id AS org FROM access_tokens k LEFT JOIN memberships m ON m.account_id = k.account_id AND m.organization_id = $2::uuid
   WHERE k.token_hash = $1::bytea AND k.revoked IS NULL AND (k.expires IS NULL OR k.expires > now()))`;

/** The statement of a request's shape: which properties, box, polygon, position. $3 the page size; then the box, the polygon, the position. */
function itemsSql(names, { box, polygon, after }) {
  let n = 3;
  const where = ['(t.public OR cardinality(t.services) > 0 OR t.organization_id = $2::uuid)', 't.location IS NOT NULL'];
  if (box) where.push(`t.location && ST_MakeEnvelope($${++n}::float8, $${++n}::float8, $${++n}::float8, $${++n}::float8, 4326)`);
  if (polygon) where.push(`ST_Intersects(t.location, ST_GeomFromText($${++n}::text, 4326))`);
  if (after) where.push(`t.id > (SELECT $${++n}::uuid)`);
  const columns = ['t.id', 't.location', ...new Set(names.flatMap((name) => COLUMNS[name].map((c) => `t.${c}`)))].join(', ');
  const properties = names.length ? `json_build_object(${names.map((name) => `'${name}', ${PROPERTIES[name]}`).join(', ')})` : `'{}'::json`;
  const feature = `json_build_object('type', 'Feature', 'id', t.id, 'geometry', ST_AsGeoJSON(t.location)::json, 'properties', ${properties})`;
  const perPart = names.length <= 4 ? 100 : 25;
  return `WITH ${AUTH},
  page AS MATERIALIZED (
    SELECT ${columns}, row_number() OVER (ORDER BY t.id) AS n FROM twins t
     WHERE (SELECT a.org FROM a) IS NOT NULL AND ${where.join(' AND ')}
     ORDER BY t.id LIMIT (SELECT $3::int + 1))
  SELECT a.org, (SELECT count(*) FROM page)::int AS rows, (SELECT p.id::text FROM page p WHERE p.n = 1) AS first,
         (SELECT p.id::text FROM page p WHERE p.n = $3::int) AS last, f.part, f.g
    FROM a LEFT JOIN LATERAL (
      SELECT string_agg((${feature})::text, ',' ORDER BY t.n) AS part, (t.n - 1) / ${perPart} AS g FROM page t WHERE t.n <= $3::int GROUP BY (t.n - 1) / ${perPart}) f ON true`;
}

const texts = new Map();
const textOf = (name, build) => texts.get(name) ?? texts.set(name, build()).get(name);

class HttpError extends Error {
  constructor(status, code, detail, source) {
    super(detail);
    Object.assign(this, { status, code, source });
  }
}
const bad = (parameter, detail) => new HttpError(400, 'invalid_parameter', detail, { parameter });

const sign = (payload) => createHmac('sha256', CURSOR_KEY).update(payload).digest().subarray(0, 16).toString('base64url');
const cursorOf = (id) => {
  const payload = Buffer.from(JSON.stringify([SCOPE, [id]])).toString('base64url');
  return `${payload}.${sign(payload)}`;
};
function positionOf(cursor) {
  const [payload, signature] = cursor.split('.');
  const expected = Buffer.from(sign(payload ?? ''));
  if (!signature || Buffer.byteLength(signature) !== expected.length || !timingSafeEqual(Buffer.from(signature), expected)) throw bad('page_after', 'Not a cursor of this list.');
  const [scope, position] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  if (scope !== SCOPE) throw bad('page_after', 'Not a cursor of this list.');
  return position[0];
}

const POLYGON = /^S_INTERSECTS\(geometry,\s*(POLYGON\s*\(\([-\d.,\s]+\)\))\)$/i;
const ALLOWED = new Set(['bbox', 'limit', 'properties', 'page_after', 'filter', 'filter-lang']);

const app = Fastify({ logger: false });
app.get('/ogc/collections/twins/items', async (request, reply) => {
  const q = request.query;
  for (const name of Object.keys(q)) if (!ALLOWED.has(name)) throw bad(name, `Unknown query parameter "${name}".`);
  const token = /^Token (\S{1,512})$/.exec(request.headers.authorization ?? '')?.[1];
  const organization = request.headers['x-organization'];
  if (!token) throw new HttpError(401, 'not_authenticated', 'Send "Authorization: Token <ACCESS_TOKEN>".', { header: 'Authorization' });
  if (typeof organization !== 'string' || !/^[0-9a-f-]{36}$/i.test(organization)) throw new HttpError(400, 'invalid_header', 'X-Organization must be a UUID.', { header: 'X-Organization' });
  const limit = q.limit === undefined ? 100 : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1) throw bad('limit', 'limit must be a whole number from 1.');
  const values = [createHash('sha256').update(token, 'utf8').digest(), organization, Math.min(limit, MAX_LIMIT)];
  const names = q.properties === undefined ? Object.keys(PROPERTIES) : q.properties === '' ? [] : q.properties.split(',');
  if (names.some((name) => !PROPERTIES[name])) throw bad('properties', 'Unknown property.');
  const shape = { box: q.bbox !== undefined, polygon: q.filter !== undefined, after: q.page_after !== undefined };
  if (shape.box) {
    const box = q.bbox.split(',').map(Number);
    if (box.length !== 4 || box.some((v) => !Number.isFinite(v))) throw bad('bbox', 'bbox is 4 numbers.');
    values.push(...box);
  }
  if (shape.polygon) {
    const wkt = POLYGON.exec(q.filter)?.[1];
    if (!wkt || (q['filter-lang'] ?? 'cql2-text') !== 'cql2-text') throw bad('filter', 'This server reads S_INTERSECTS(geometry, POLYGON((…))) only.');
    values.push(wkt);
  }
  if (shape.after) values.push(positionOf(q.page_after));
  const name = `ogc:${names.join(',')}:${shape.box}:${shape.polygon}:${shape.after}`;
  const { rows } = await pool.query({ name: createHash('sha1').update(name).digest('hex'), text: textOf(name, () => itemsSql(names, shape)), values });
  const row = rows[0];
  if (!row) throw new HttpError(401, 'not_authenticated', 'The access token is unknown, revoked or expired.', { header: 'Authorization' });
  if (!row.org) throw new HttpError(403, 'forbidden', 'The account is not a member of that organization.', { header: 'X-Organization' });
  const parts = rows.filter((r) => r.part !== null).sort((a, b) => a.g - b.g);
  const features = `[${parts.map((r) => r.part).join(',')}]`;
  const self = `${request.protocol}://${request.host}${request.url}`;
  const links = [{ href: self, rel: 'self', type: GEO_JSON }];
  if (row.rows > values[2]) {
    const url = new URL(self);
    url.searchParams.delete('page_after');
    url.searchParams.set('page_after', cursorOf(row.last));
    links.push({ href: url.href, rel: 'next', type: GEO_JSON });
  }
  if (shape.after) {
    // As the service: a page read from a position links back to the page before it.
    const url = new URL(self);
    url.searchParams.delete('page_after');
    url.searchParams.set('page_before', cursorOf(row.first ?? values[values.length - 1]));
    links.push({ href: url.href, rel: 'prev', type: GEO_JSON });
  }
  reply.type(GEO_JSON);
  return `{"type":"FeatureCollection","features":${features},"numberReturned":${Math.min(row.rows, values[2])},"timeStamp":"${new Date().toISOString().replace('Z', '000Z')}","links":${JSON.stringify(links)}}`;
});
app.get('/health', async () => ({ status: 'ok' }));
app.setErrorHandler((error, _request, reply) => {
  const status = error.status ?? 500;
  reply.status(status).type('application/vnd.api+json').send({ errors: [{ status: String(status), code: error.code ?? 'internal_error', title: 'Error', detail: error.message, ...(error.source ? { source: error.source } : {}) }] });
});
await app.listen({ port: Number(process.env.PORT ?? 3361), host: '127.0.0.1' });
process.on('SIGTERM', () => app.close().then(() => pool.end()).then(() => process.exit(0)));
