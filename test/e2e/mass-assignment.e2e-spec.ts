import { document, expectError, JSON_API, ADMIN_TOKEN, TestApp } from '../support/test-app';
import { buildWorld, holdHousekeeping, snapshotRows, tenantTables, World } from '../support/world';

/**
 * Property-level authorization (OWASP API3, mass assignment): on every write, attributes and
 * relationships a client may not set (ids, organization, owner, timestamps, counters, revenue,
 * publication on create, the acting twin, the original) are refused with a 400 naming the member, and
 * nothing changes in the database. The valid part of each document is accepted on its own, so the
 * refusal is about the forbidden member only.
 */

type Write = {
  route: string;
  method: 'POST' | 'PATCH';
  url: (w: World) => string;
  headers: (w: World) => Record<string, string>;
  /** A valid document for the route (accepted as is). */
  valid: (w: World) => Record<string, unknown>;
  attributes: string[];
  relationships: string[];
};

const SERVER_OWNED = ['organization', 'organization-id', 'organization_id', 'owner', 'owner-account', 'account', 'created', 'modified', 'id', 'twin', 'twin-id'];

const admin = () => ({ authorization: `Token ${ADMIN_TOKEN}` });

const WRITES: Write[] = [
  {
    route: 'POST /my/twins',
    method: 'POST',
    url: () => '/my/twins/',
    headers: (w) => w.tenant.headers(),
    valid: () => ({ type: 'twins', attributes: { name: 'mass assignment probe' } }),
    attributes: [...SERVER_OWNED, 'tasks_supplied', 'tasks-supplied', 'place_id', 'place-id', 'provider', 'provider-info', 'personality-id', 'is_personal'],
    relationships: ['organization', 'owner', 'connections'],
  },
  {
    route: 'PATCH /my/twins/:id',
    method: 'PATCH',
    url: (w) => `/my/twins/${w.siblingTwinId}/`,
    headers: (w) => w.tenant.headers(),
    valid: (w) => ({ type: 'twins', id: w.siblingTwinId, attributes: { description: 'patched' } }),
    attributes: [...SERVER_OWNED, 'tasks_supplied', 'tasks-supplied', 'place_id', 'provider', 'provider-info'],
    relationships: ['organization', 'owner'],
  },
  {
    route: 'POST /quests',
    method: 'POST',
    url: () => '/quests/',
    headers: (w) => w.tenant.headers({ twin: true }),
    valid: () => ({ type: 'quests', attributes: { name: 'mass assignment probe' } }),
    // A quest is never public on create: publishing is a PATCH by its twin.
    attributes: [...SERVER_OWNED, 'public', 'original', 'original-id', 'task-count', 'tasks', 'revenue', 'twin-metadata', 'original-twin-metadata', 'summary-image-url', 'started'],
    relationships: ['twin', 'original', 'organization', 'tasks', 'images'],
  },
  {
    route: 'PATCH /quests/:questId',
    method: 'PATCH',
    url: (w) => `/quests/${w.privateQuestId}/`,
    headers: (w) => w.tenant.headers({ twin: true }),
    valid: (w) => ({ type: 'quests', id: w.privateQuestId, attributes: { summary: 'patched' } }),
    attributes: [...SERVER_OWNED, 'original', 'task-count', 'revenue', 'twin-metadata', 'original-twin-metadata', 'summary-image-url'],
    relationships: ['twin', 'original', 'organization'],
  },
  {
    route: 'POST /quests/:questId/tasks',
    method: 'POST',
    url: (w) => `/quests/${w.privateQuestId}/tasks/`,
    headers: (w) => w.tenant.headers({ twin: true }),
    valid: () => ({ type: 'tasks', attributes: { name: 'mass assignment probe' } }),
    attributes: [...SERVER_OWNED, 'quest', 'quest-id', 'place-id'],
    relationships: ['quest', 'twin', 'organization'],
  },
  {
    route: 'POST /events',
    method: 'POST',
    url: () => '/events/',
    headers: (w) => w.tenant.headers({ twin: true }),
    valid: () => ({ type: 'events', attributes: { name: 'probe', category: 'probe', data: {} } }),
    attributes: [...SERVER_OWNED, 'timestamp'],
    relationships: ['twin', 'organization'],
  },
  {
    route: 'PATCH /events/:id',
    method: 'PATCH',
    url: (w) => `/events/${w.eventIds[0]}`,
    headers: (w) => w.tenant.headers({ twin: true }),
    valid: (w) => ({ type: 'events', id: w.eventIds[0], attributes: { category: 'patched' } }),
    attributes: [...SERVER_OWNED, 'timestamp'],
    relationships: ['twin', 'organization'],
  },
  {
    route: 'POST /admin/organizations',
    method: 'POST',
    url: () => '/admin/organizations/',
    headers: admin,
    valid: () => ({ type: 'organizations', attributes: { name: 'mass assignment probe' } }),
    attributes: ['id', 'created', 'modified', 'members', 'owner'],
    relationships: ['accounts', 'members'],
  },
  {
    route: 'POST /admin/accounts',
    method: 'POST',
    url: () => '/admin/accounts/',
    headers: admin,
    valid: () => ({ type: 'accounts', attributes: { name: 'mass assignment probe' } }),
    attributes: ['id', 'created', 'modified', 'organization', 'admin', 'role'],
    relationships: ['tokens', 'organization'],
  },
  {
    route: 'POST /admin/accounts/:accountId/tokens',
    method: 'POST',
    url: (w) => `/admin/accounts/${w.accountId}/tokens/`,
    headers: admin,
    valid: () => ({ type: 'tokens', attributes: { expires: '2099-01-01T00:00:00Z' } }),
    attributes: ['id', 'token', 'token-hash', 'token_hash', 'account', 'account-id', 'revoked', 'created'],
    relationships: ['account'],
  },
];

describe('property-level authorization: no mass assignment on any write', () => {
  let service: TestApp;
  let world: World;
  let tables: Awaited<ReturnType<typeof tenantTables>>;

  beforeAll(async () => {
    service = await TestApp.start();
    world = await buildWorld(service, 'M');
    await holdHousekeeping(service);
    tables = await tenantTables(service);
  }, 60_000);
  afterAll(() => service?.close());

  /** Everything a write could touch: the world's rows, and the global counts the admin API changes. */
  const state = async () => {
    const rows = await snapshotRows(service, tables, world.organizationId);
    const counts: { n: string }[] = await service.dataSource.query(
      `SELECT (SELECT count(*) FROM organizations) || '/' || (SELECT count(*) FROM accounts) || '/' || (SELECT count(*) FROM access_tokens) AS n`,
    );
    return { rows, counts: counts[0].n };
  };

  const send = (write: Write, data: Record<string, unknown>) =>
    service.inject({ method: write.method, url: write.url(world), headers: { ...write.headers(world), 'content-type': JSON_API }, payload: document(data) });

  it.each(WRITES.map((w) => [w.route, w] as const))('%s refuses every server-owned member (400 with pointer) and changes nothing', async (_route, write) => {
    const before = await state();
    const problems: string[] = [];
    for (const attribute of write.attributes) {
      const valid = write.valid(world);
      const data = { ...valid, attributes: { ...(valid.attributes as object), [attribute]: attribute === 'public' ? true : world.publicTwinId } };
      const response = await send(write, data);
      if (response.statusCode !== 400 || response.json().errors?.[0]?.source?.pointer !== `/data/attributes/${attribute}`) {
        problems.push(`attribute ${attribute}: ${response.statusCode} ${response.body.slice(0, 160)}`);
      }
    }
    for (const relationship of write.relationships) {
      const data = { ...write.valid(world), relationships: { [relationship]: { data: { type: 'twins', id: world.publicTwinId } } } };
      const response = await send(write, data);
      if (response.statusCode !== 400 || response.json().errors?.[0]?.source?.pointer !== `/data/relationships/${relationship}`) {
        problems.push(`relationship ${relationship}: ${response.statusCode} ${response.body.slice(0, 160)}`);
      }
    }
    expect(problems).toEqual([]);
    expect(await state()).toEqual(before);
    // The valid part alone is accepted: the refusals were about the forbidden member.
    const accepted = await send(write, write.valid(world));
    expect([200, 201]).toContain(accepted.statusCode);
  });

  it('a client-generated id on create is refused with 403 on /data/id where the route takes none, a 400 where it is not a UUID; nothing is created', async () => {
    const before = await state();
    // Offline apps name their twins and events (a UUID); every other create refuses an id.
    const takesClientIds = (write: (typeof WRITES)[number]) => ['/my/twins/', '/events/'].includes(write.url(world));
    for (const write of WRITES.filter((w) => w.method === 'POST')) {
      if (takesClientIds(write)) {
        expectError(await send(write, { ...write.valid(world), id: 'not-a-uuid' }), 400, { pointer: '/data/id' });
        expectError(await send(write, { ...write.valid(world), id: 7 }), 400, { pointer: '/data/id' });
      } else {
        expectError(await send(write, { ...write.valid(world), id: '00000000-0000-4000-8000-000000000001' }), 403, { pointer: '/data/id' });
      }
    }
    expect(await state()).toEqual(before);
  });

  it('an id naming another resource on update is a 409, and nothing changes', async () => {
    const before = await state();
    for (const write of WRITES.filter((w) => w.method === 'PATCH')) {
      const response = await send(write, { ...write.valid(world), id: world.publicQuestId });
      expectError(response, 409, { pointer: '/data/id' });
    }
    expect(await state()).toEqual(before);
  });

  it('what the server owns is set by the server: organization, owner, creating twin, public=false, timestamps', async () => {
    const twin = await send(WRITES[0], { type: 'twins', attributes: { name: 'owned by the caller' } });
    const quest = await send(WRITES[2], { type: 'quests', attributes: { name: 'created private' } });
    const [twinRow] = await service.dataSource.query(`SELECT organization_id, owner_account_id, tasks_supplied FROM twins WHERE id = $1`, [twin.json().data.id]);
    expect(twinRow).toEqual({ organization_id: world.organizationId, owner_account_id: world.accountId, tasks_supplied: 0 });
    const [questRow] = await service.dataSource.query(`SELECT organization_id, twin_id, public, original_id FROM quests WHERE id = $1`, [quest.json().data.id]);
    expect(questRow).toEqual({ organization_id: world.organizationId, twin_id: world.twinId, public: false, original_id: null });
  });
});
