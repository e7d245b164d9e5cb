// The raw baseline: plain Fastify + pg, no Nest. It answers the benchmarked routes with the service's
// own SQL — it calls the very repository classes of the production build (dist/), handing them a
// DataSource stand-in whose query() goes straight to a pg Pool — and the same JSON shape (the
// service's own resource mappers and pagination helpers). What it leaves out is exactly the framework:
// Nest's router, guards, pipes, interceptors, rxjs, TypeORM's query runners, exception filters.
//
//   DATABASE_URL=… PORT=… node bench/raw-server.mjs
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const dist = (path) => require(join(root, 'dist/src', path));

const Fastify = require('fastify');
const { Pool } = require('pg');
const { installPgTypeParsers } = dist('database/timestamps.js');
const { AuthRepository } = dist('common/auth/auth.repository.js');
const { parseAuthorization } = dist('common/auth/tokens.js');
const { isUuid, params, readQuery } = dist('common/json-api/query.js');
const { readPageRequest, assertPageExists, Page, pageLinks, paginationMeta } = dist('common/json-api/pagination.js');
const { TwinsRepository } = dist('twins/twins.repository.js');
const { twinListResource, ownTwinResource, twinDetailResource } = dist('twins/twin.resource.js');
const { readTwinFilters, readOwnTwinFilters } = dist('twins/twin-filters.js');
const { wantsGeoJson } = dist('twins/twin-geo.js');
const { EventsRepository } = dist('events/events.repository.js');
const { eventResource } = dist('events/event.resource.js');
const { uuidv7 } = dist('events/uuidv7.js');
const { MAX_EVENT_DATA_BYTES, serializedSize } = dist('events/event-data.js');
const { QuestsRepository } = dist('quests/quests.repository.js');
const { questResource } = dist('quests/quest.resource.js');

installPgTypeParsers();
const pool = new Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
  application_name: 'twin-bench-raw',
  options: '-c TimeZone=UTC',
});
const query = async (sql, values) => (await pool.query(sql, values)).rows;
const db = { query, manager: { query } };

const auth = new AuthRepository(db);
const twins = new TwinsRepository(db);
const events = new EventsRepository(db);
const quests = new QuestsRepository(db);
const EVENTS_CHANNEL = process.env.EVENT_BUS === 'memory' ? null : 'twin_events';
const PAGE = { defaultSize: 50, maxSize: 100 };
const GEO_PAGE = { defaultSize: 1000, maxSize: 10000 };
const JSON_API = 'application/vnd.api+json';

class HttpError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

const header = (request, name) => {
  const value = request.headers[name];
  return typeof value === 'string' ? value.trim() : undefined;
};

/** The same single lookup as TokenGuard (token + membership + twin), then the organization/twin checks. */
async function tenantOf(request, actsAsTwin) {
  const token = parseAuthorization(request.headers.authorization);
  if (!token) throw new HttpError(401, 'no token');
  const organizationId = header(request, 'x-organization');
  const twinId = actsAsTwin ? header(request, 'x-twin') : undefined;
  const resolved = await auth.resolve(token, isUuid(organizationId) ? organizationId : undefined, isUuid(twinId) ? twinId : undefined);
  if (!resolved) throw new HttpError(401, 'unknown token');
  if (!resolved.organization) throw new HttpError(403, 'not a member');
  const tenant = { account: resolved.account, organization: resolved.organization, tokenId: resolved.tokenId };
  if (actsAsTwin === 'required' && !resolved.twin) throw new HttpError(403, 'no twin');
  if (resolved.twin) tenant.twin = resolved.twin;
  return tenant;
}

const requestUrl = (request) => new URL(request.url, `${request.protocol}://${request.host || 'localhost'}/`);

const pageEnvelope = (request, page) => ({ links: pageLinks(requestUrl(request), page), data: page.data, meta: paginationMeta(page) });

async function twinPage(tenant, twinQuery, page, toResource) {
  const count = await twins.count(tenant, twinQuery);
  assertPageExists(page, count);
  const rows = count === 0 ? [] : await twins.page(tenant, twinQuery, page);
  return new Page(rows.map(toResource), page, count);
}

const app = Fastify({ logger: false, routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 } });
app.removeAllContentTypeParsers();
app.addContentTypeParser(['application/vnd.api+json', 'application/json'], { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'));
app.addHook('onRequest', async (request, reply) => {
  // The response headers every service answer carries.
  reply.header('x-request-id', randomUUID());
  reply.header('x-content-type-options', 'nosniff');
  reply.header('x-frame-options', 'DENY');
  reply.header('referrer-policy', 'no-referrer');
});
app.setErrorHandler((error, _request, reply) => {
  const status = error.status ?? error.statusCode ?? 500;
  reply.status(status).header('content-type', JSON_API).send({ errors: [{ status: String(status), detail: error.message }] });
});

app.get('/twins/:id', async (request, reply) => {
  const tenant = await tenantOf(request, undefined);
  if (!isUuid(request.params.id)) throw new HttpError(404, 'No such twin.');
  const row = await twins.findVisible(tenant, request.params.id.toLowerCase());
  if (!row) throw new HttpError(404, 'No such twin.');
  reply.header('content-type', JSON_API);
  return { data: twinDetailResource(row) };
});

app.get('/twins', async (request, reply) => {
  const tenant = await tenantOf(request, 'optional');
  reply.header('vary', 'Accept, Content-Type');
  const filters = readTwinFilters(request.query);
  const { personality: _ignored, ...twinQuery } = filters;
  if (!wantsGeoJson(request.headers)) {
    const page = readPageRequest(request.query, PAGE);
    reply.header('content-type', JSON_API);
    return pageEnvelope(request, await twinPage(tenant, twinQuery, page, twinListResource));
  }
  const geoQuery = { ...twinQuery, located: true };
  const pageRequest = readPageRequest(request.query, GEO_PAGE);
  const count = await twins.count(tenant, geoQuery);
  assertPageExists(pageRequest, count);
  const results = count === 0 ? '{"type":"FeatureCollection","features":[]}' : await twins.featureCollection(tenant, geoQuery, pageRequest);
  const page = new Page(undefined, pageRequest, count);
  const links = JSON.stringify(pageLinks(requestUrl(request), page));
  const meta = JSON.stringify(paginationMeta(page));
  reply.header('content-type', 'application/geo+json');
  return `{"links":${links},"data":{"results":${results},"meta":${meta},"links":${links}},"meta":${meta}}`;
});

app.get('/my/twins', async (request, reply) => {
  const tenant = await tenantOf(request, undefined);
  const twinQuery = { ...readOwnTwinFilters(request.query), own: true };
  const page = readPageRequest(request.query, PAGE);
  reply.header('content-type', JSON_API);
  return pageEnvelope(request, await twinPage(tenant, twinQuery, page, ownTwinResource));
});

app.post('/events', async (request, reply) => {
  const tenant = await tenantOf(request, 'required');
  const data = request.body?.data;
  const attributes = data?.attributes;
  if (data?.type !== 'events' || typeof attributes !== 'object' || attributes === null) throw new HttpError(400, 'invalid document');
  const { name, category } = attributes;
  if (typeof name !== 'string' || name.length < 1 || name.length > 255) throw new HttpError(400, 'name');
  if (typeof category !== 'string' || category.length < 1 || category.length > 255) throw new HttpError(400, 'category');
  if (typeof attributes.data !== 'object' || attributes.data === null || Array.isArray(attributes.data)) throw new HttpError(400, 'data');
  if (serializedSize(attributes.data) > MAX_EVENT_DATA_BYTES) throw new HttpError(400, 'data too big');
  const row = await events.insert(tenant, { id: uuidv7(), name, category, data: attributes.data }, EVENTS_CHANNEL);
  reply.status(201).header('content-type', JSON_API).header('location', new URL(`/events/${row.id}`, requestUrl(request)).href);
  return { data: eventResource(row) };
});

app.get('/events', async (request, reply) => {
  const tenant = await tenantOf(request, 'required');
  const filter = readQuery(request.query, { name: params.text, category: params.text, since: params.timestamp, until: params.timestamp }, { paginated: true });
  const page = readPageRequest(request.query, PAGE);
  const count = await events.countTimeline(tenant, filter);
  assertPageExists(page, count);
  const rows = count === 0 ? [] : await events.pageTimeline(tenant, filter, page);
  reply.header('content-type', JSON_API);
  return pageEnvelope(request, new Page(rows.map(eventResource), page, count));
});

app.get('/quests', async (request, reply) => {
  const tenant = await tenantOf(request, 'required');
  const filters = readQuery(request.query, { owned_by: params.uuid, name: params.text, description: params.text }, { paginated: true });
  const page = readPageRequest(request.query, PAGE);
  const count = await quests.countDiscovery(tenant, filters);
  assertPageExists(page, count);
  const rows = count === 0 ? [] : await quests.pageDiscovery(tenant, filters, page);
  const base = requestUrl(request);
  const imageUrl = (imageId) => new URL(`/images/${imageId}/content`, base).href;
  reply.header('content-type', JSON_API);
  return pageEnvelope(request, new Page(rows.map((row) => questResource(row, imageUrl)), page, count));
});

app.get('/health', async () => ({ status: 'ok' }));

await app.listen({ port: Number(process.env.PORT ?? 3301), host: '127.0.0.1' });
process.send?.('ready');
const close = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.on('SIGTERM', close);
process.on('SIGINT', close);
