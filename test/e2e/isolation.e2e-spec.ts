import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { png } from '../support/images';
import { listRoutes, RouteInfo } from '../support/routes';
import { document, JSON_API, TestApp } from '../support/test-app';
import { buildWorld, holdHousekeeping, snapshotRows, tenantTables, World } from '../support/world';

/**
 * Isolation matrix (issue 7, OWASP API1 / API5): every route of the running application, called with
 * one organization's credentials against the other organization's ids, in both directions. Each call
 * must be refused (403/404; admin routes 401), return none of the victim's private ids or names, and
 * change no row of either organization in any tenant table. A route, path parameter or write without a
 * rule here fails the test, so a route added later is covered or breaks the build.
 */

/** Path parameter → the victim's ids to aim at (several when the kinds differ). */
const PARAMS: Record<string, (route: RouteInfo, victim: World) => string[]> = {
  accountId: (_r, v) => [v.accountId],
  tokenId: (_r, v) => [v.tokenId, v.secondTokenId],
  organizationId: (_r, v) => [v.organizationId],
  imageId: (_r, v) => [v.privateImageId],
  questId: (route, v) => {
    // A visible public quest may be read and embarked on by anyone; changing it is still refused.
    const isChange = route.method === 'PATCH' || (route.method === 'POST' && route.path.endsWith('/tasks'));
    return [v.privateQuestId, v.copyQuestId, ...(isChange ? [v.publicQuestId] : [])];
  },
  id: (route, v) => {
    if (route.path.startsWith('/events/')) return v.eventIds;
    // PATCH /my/twins/: another organization's twin is a 404 even when it is public.
    if (route.path.startsWith('/my/twins/')) return [v.twinId, v.siblingTwinId, v.publicTwinId];
    if (route.path.startsWith('/twins/')) return [v.twinId, v.siblingTwinId];
    // An OGC API feature: the victim's private twins (its public one is every organization's).
    if (route.path.startsWith('/ogc/collections/twins/items/')) return [v.twinId, v.siblingTwinId];
    if (route.path.startsWith('/webhooks/')) return [v.webhookId];
    if (route.path.startsWith('/geofences/')) return [v.geofenceId];
    throw new Error(`no isolation rule for :id on ${route.method} ${route.path}`);
  },
  // A vector tile is a listing of a place: the zoom-14 tile of both worlds' twins (13.4, 52.5), where the
  // attacker sees its own twins and must see none of the victim's private ones.
  z: () => [TILE_OF_THE_WORLDS],
  // The map page's files hold no data: public, the same for everyone.
  asset: () => ['map.js'],
  x: () => [],
  y: () => [],
};

/** `z/x/y` of the zoom-14 tile holding 13.4, 52.5 (support/world.ts places every world's twins there). */
const TILE_OF_THE_WORLDS = '14/8801/5374';
/** Path parameters that are tile coordinates, filled at once by PARAMS.z. */
const TILE_COORDINATES = ':z/:x/:y';

interface Body {
  contentType: string;
  payload: string | Buffer;
  /** True when the body itself names the victim's resources (so even the attacker's own context must refuse it). */
  namesVictim: boolean;
}

/** Request bodies of writes, "valid-looking" and aimed at the victim; null: the route takes none. */
const BODIES: Record<string, ((victim: World, pathId: string | undefined) => Body) | null> = {
  'POST /admin/organizations': () => json({ type: 'organizations', attributes: { name: 'intruder org' } }, false),
  'POST /admin/accounts': (v) =>
    json({ type: 'accounts', attributes: { name: 'intruder' }, relationships: { organizations: { data: [{ type: 'organizations', id: v.organizationId }] } } }, true),
  'POST /admin/accounts/:accountId/tokens': null,
  'DELETE /admin/tokens/:tokenId': null,
  'POST /events': () => json({ type: 'events', attributes: { name: 'intrusion', category: 'x', data: {} } }, false),
  'PATCH /events/:id': (_v, id) => json({ type: 'events', id, attributes: { name: 'hijacked', data: { secret: null } } }, true),
  'DELETE /events/:id': (_v, id) => json({ type: 'events', id }, true),
  'POST /images': () => ({ contentType: 'image/png', payload: png(1, 1), namesVictim: false }),
  'POST /my/twins': (v) => json({ type: 'twins', attributes: { name: 'intruder twin', connections: [v.twinId, v.siblingTwinId] } }, true),
  // No connections here: the service checks a body's references before the path twin (a 400 naming the
  // connection, which discloses nothing); the path twin alone must give the 404.
  'PATCH /my/twins/:id': (_v, id) => json({ type: 'twins', id, attributes: { name: 'hijacked', public: true, 'meta-data': { owner: 'intruder' } } }, true),
  'POST /quests': (v) => json({ type: 'quests', attributes: { name: 'intruder quest', 'summary-image': v.privateImageId } }, true),
  'PATCH /quests/:questId': (v, id) => json({ type: 'quests', id, attributes: { name: 'hijacked', public: true, price: 0, 'summary-image': v.privateImageId } }, true),
  'POST /quests/:questId/embark': null,
  'POST /webhooks': () => json({ type: 'webhooks', attributes: { url: 'https://93.184.215.14/intruder', events: ['event.created'] } }, false),
  'PATCH /webhooks/:id': (_v, id) => json({ type: 'webhooks', id, attributes: { url: 'https://93.184.215.14/intruder', enabled: true } }, true),
  'DELETE /webhooks/:id': null,
  'POST /geofences': () => json({ type: 'geofences', attributes: { name: 'intruder place', geometry: { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 0]]] } } }, false),
  'PATCH /geofences/:id': (_v, id) => json({ type: 'geofences', id, attributes: { name: 'intruder place' } }, true),
  'DELETE /geofences/:id': null,
  'POST /webhooks/:id/rotate-secret': null,
  // A batch naming the victim's events and twin: refused whole, in the attacker's context too.
  'POST /operations': (v) => ({
    contentType: 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"',
    payload: JSON.stringify({
      'atomic:operations': [
        { op: 'update', data: { type: 'events', id: v.eventIds[0], attributes: { name: 'hijacked' } } },
        { op: 'remove', ref: { type: 'events', id: v.eventIds[1] } },
        { op: 'update', data: { type: 'twins', id: v.twinId, attributes: { name: 'hijacked' } } },
        { op: 'add', data: { type: 'positions', attributes: { coordinates: [0, 0], occurred: new Date().toISOString() }, relationships: { twin: { data: { type: 'twins', id: v.twinId } } } } },
      ],
    }),
    namesVictim: true,
  }),
  // Valid positions for the path twin: only the path names the victim's twin.
  'POST /twins/:id/positions': () => ({
    contentType: JSON_API,
    payload: JSON.stringify({ data: [{ type: 'positions', attributes: { coordinates: [13.4, 52.5], occurred: new Date().toISOString() } }] }),
    namesVictim: false,
  }),
  'POST /quests/:questId/tasks': (v) =>
    json({ type: 'tasks', attributes: { name: 'intruder task' }, relationships: { place: { data: { type: 'twins', id: v.siblingTwinId } } } }, true),
};

/** Routes that never end on their own (server-sent events): only their refusals are exercised. */
const STREAMS = new Set(['GET /events/stream']);

const json = (data: Record<string, unknown>, namesVictim: boolean): Body => ({ contentType: JSON_API, payload: document(data), namesVictim });
const key = (route: RouteInfo) => `${route.method} ${route.path}`;
const paramsOf = (path: string) => [...path.matchAll(/:(\w+)/g)].map((m) => m[1]);

interface Probe {
  what: string;
  options: InjectOptions;
  /** Allowed statuses. */
  expect: number[];
}

describe('isolation matrix: every route, organization A against organization B and back', () => {
  let service: TestApp;
  let worlds: [World, World];
  let tables: Awaited<ReturnType<typeof tenantTables>>;
  let requests = 0;
  const covered = new Set<string>();

  beforeAll(async () => {
    service = await TestApp.start();
    worlds = [await buildWorld(service, 'A'), await buildWorld(service, 'B')];
    await holdHousekeeping(service);
    tables = await tenantTables(service);
  }, 60_000);
  afterAll(async () => {
    process.stdout.write(
      `isolation matrix: ${covered.size} route × tenant pairs (${listRoutes(service.app).length} routes × 2 tenants), ${requests} requests, tables: ${(tables ?? []).map((t) => t.table).join(', ')}\n`,
    );
    await service?.close();
  });

  it('discovers every tenant table and finds both worlds in each that holds data', async () => {
    const names = tables.map((t) => t.table);
    for (const table of ['organizations', 'accounts', 'memberships', 'access_tokens', 'twins', 'quests', 'quest_tasks', 'images', 'revenue_entries', 'events']) {
      expect(names).toContain(table);
    }
    for (const world of worlds) {
      const snapshot = await snapshotRows(service, tables, world.organizationId);
      for (const table of ['twins', 'quests', 'quest_tasks', 'images', 'revenue_entries', 'events', 'access_tokens']) {
        expect(Number(snapshot[table].split(':')[0])).toBeGreaterThan(0);
      }
    }
  });

  it('every route has a rule for each of its path parameters and writes', () => {
    const missing: string[] = [];
    for (const route of listRoutes(service.app)) {
      for (const param of paramsOf(route.path)) if (!PARAMS[param]) missing.push(`${key(route)} :${param}`);
      if (['POST', 'PATCH', 'PUT', 'DELETE'].includes(route.method) && !(key(route) in BODIES)) missing.push(`${key(route)} (body)`);
    }
    expect(missing).toEqual([]);
  });

  for (const [attackerIndex, victimIndex] of [
    [0, 1],
    [1, 0],
  ] as const) {
    it(`organization ${attackerIndex === 0 ? 'A' : 'B'} cannot read or change anything of ${victimIndex === 0 ? 'A' : 'B'}`, async () => {
      const attacker = worlds[attackerIndex];
      const victim = worlds[victimIndex];
      const failures: string[] = [];
      const before = [await snapshotRows(service, tables, victim.organizationId), await snapshotRows(service, tables, attacker.organizationId)];

      const send = async (route: RouteInfo, probe: Probe): Promise<LightMyRequestResponse> => {
        requests++;
        const response = await service.inject(probe.options);
        const label = `${key(route)} ${probe.what} → ${response.statusCode}`;
        if (!probe.expect.includes(response.statusCode)) failures.push(`${label}: expected ${probe.expect.join('/')} ${response.body.slice(0, 200)}`);
        // What the request itself carried may be echoed (a pointer's detail, a page link): that discloses nothing.
        const sent = `${probe.options.url} ${String(probe.options.payload ?? '')}`;
        const leaked = [...victim.privateIds, ...victim.privateNames].filter((secret) => response.body.includes(secret) && !sent.includes(secret));
        if (leaked.length > 0) failures.push(`${label}: body contains the victim's ${leaked.join(', ')}`);
        const after = [await snapshotRows(service, tables, victim.organizationId), await snapshotRows(service, tables, attacker.organizationId)];
        for (const [index, snapshot] of after.entries()) {
          for (const table of Object.keys(snapshot)) {
            if (snapshot[table] !== before[index][table]) {
              failures.push(`${label}: changed ${index === 0 ? "the victim's" : "the attacker's"} rows in ${table}`);
              before[index][table] = snapshot[table];
            }
          }
        }
        return response;
      };

      for (const route of listRoutes(service.app)) {
        const params = paramsOf(route.path);
        const ids = params.length === 0 ? [undefined] : PARAMS[params[0]](route, victim);
        const isTile = route.path.includes(TILE_COORDINATES);
        if (params.length > 1 && !isTile) throw new Error(`${key(route)}: several path parameters; extend the matrix`);
        const bodyRule = BODIES[key(route)];
        for (const id of ids) {
          const url = id ? route.path.replace(isTile ? TILE_COORDINATES : /:\w+/, id) : route.path;
          const body = bodyRule ? bodyRule(victim, id) : undefined;
          const withBody = (headers: Record<string, string>): InjectOptions => ({
            method: route.method as InjectOptions['method'],
            url,
            headers: { ...headers, ...(body ? { 'content-type': body.contentType } : {}) },
            ...(body ? { payload: body.payload } : {}),
          });
          const own = attacker.tenant.headers({ twin: route.access.twin ? attacker.twinId : undefined });

          if (route.access.public) {
            await send(route, { what: 'public', options: withBody({}), expect: [200] });
          } else if (route.access.admin) {
            await send(route, { what: "with the attacker's token", options: withBody(own), expect: [401] });
            await send(route, { what: "with the attacker's second token", options: withBody({ authorization: `Token ${attacker.secondToken}` }), expect: [401] });
          } else {
            // 1. The attacker's own context, the victim's ids in the path or the body.
            if (isTile) {
              await send(route, { what: `own context, the tile ${id} of both worlds' twins`, options: withBody(own), expect: [200] });
            } else if (id !== undefined) {
              await send(route, { what: `own context, victim id ${id}`, options: withBody(own), expect: [403, 404] });
            } else if (body?.namesVictim) {
              await send(route, { what: 'own context, body naming victim ids', options: withBody(own), expect: [400, 403, 404, 409] });
            } else if (route.method === 'GET' && !STREAMS.has(key(route))) {
              // A listing: answers, but shows nothing private of the victim (checked by send).
              await send(route, { what: 'own context listing', options: withBody(own), expect: [200] });
            }
            // 2. Acting as the victim's twin.
            if (route.access.twin) {
              await send(route, { what: "X-Twin = victim's twin", options: withBody({ ...own, 'x-twin': victim.twinId }), expect: [403] });
            }
            // 3. Naming the victim's organization.
            const asVictimOrg = { ...own, 'x-organization': victim.organizationId, ...(route.access.twin ? { 'x-twin': victim.twinId } : {}) };
            await send(route, { what: "X-Organization = victim's", options: withBody(asVictimOrg), expect: [403] });
          }
        }
        covered.add(`${key(route)} × ${attacker.label}→${victim.label}`);
      }

      // Listings with filters that name the victim.
      const lists: [string, Record<string, string>][] = [
        [`/twins/?organization=${victim.organizationId}`, attacker.tenant.headers()],
        [`/twins/?personality=${victim.siblingTwinId}`, attacker.tenant.headers()],
        [`/twins/?is_connection=true`, attacker.tenant.headers({ twin: attacker.twinId })],
        ['/twins/', { ...attacker.tenant.headers(), accept: 'application/geo+json' }],
        [`/my/twins/?point=13.4,52.5&dist=10000`, attacker.tenant.headers()],
        [`/my/quests/?original=${victim.privateQuestId}`, attacker.tenant.headers({ twin: attacker.twinId })],
        [`/my/quests/?owned_by=${victim.twinId}`, attacker.tenant.headers({ twin: attacker.twinId })],
        [`/quests/?name=${encodeURIComponent(victim.marker)}`, attacker.tenant.headers({ twin: attacker.twinId })],
        [`/events/?name=${encodeURIComponent(victim.marker)}`, attacker.tenant.headers({ twin: attacker.twinId })],
        [`/twins/tiles/${TILE_OF_THE_WORLDS}.mvt?organization=${victim.organizationId}`, attacker.tenant.headers()],
        [`/twins/tiles/0/0/0.mvt?is_public=false`, attacker.tenant.headers()],
        [`/twins/tiles.json?organization=${victim.organizationId}`, attacker.tenant.headers()],
        [`/ogc/collections/twins/items?organization=${victim.organizationId}&limit=10000`, attacker.tenant.headers()],
        [`/ogc/collections/twins/items?limit=10000&filter=${encodeURIComponent(`organization = '${victim.organizationId}' OR S_INTERSECTS(geometry, POINT(13.4 52.5)) OR S_DWITHIN(geometry, POINT(13.4 52.5), 100000)`)}`, attacker.tenant.headers()],
        [`/ogc/collections/twins/items?is_public=false&limit=10000&bbox=13,52,14,53`, attacker.tenant.headers()],
        [`/ogc/collections/twins/items?is_connection=true&limit=10000`, attacker.tenant.headers({ twin: attacker.twinId })],
        [`/ogc/collections`, attacker.tenant.headers()],
      ];
      const listRoute = { method: 'GET', path: '(filtered listing)', controller: '', handler: '', access: {} };
      for (const [url, headers] of lists) {
        await send(listRoute, { what: url, options: { method: 'GET', url, headers }, expect: [200, 204, 400, 404] });
      }

      // The victim's public quest is visible, and its public data only.
      const feed = await service.inject({ method: 'GET', url: '/quests/?page_size=100', headers: attacker.tenant.headers({ twin: attacker.twinId }) });
      expect(feed.statusCode).toBe(200);
      expect(feed.body).toContain(victim.publicQuestId);

      expect(failures).toEqual([]);
    }, 60_000);
  }
});
