import { randomBytes } from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { TileGridFold } from '../../src/maps/tile-grid-fold';
import { png } from './images';
import { ADMIN_TOKEN, document, JSON_API, TestApp, TestTenant } from './test-app';

/**
 * A whole organization built through the HTTP API, as a client would: admin-created organization,
 * account and two tokens; private twins (not public, no services); a private quest with a task and a
 * summary image; a public quest (on a public twin, with its own image) that a sibling twin embarked on
 * (so there is a copy and a revenue entry); events on the main twin's timeline. The isolation matrix
 * aims one world's credentials at another world's ids.
 *
 * Every name carries a random marker, so a response can be searched for any of them.
 */
export interface World {
  label: string;
  marker: string;
  tenant: TestTenant;
  organizationId: string;
  accountId: string;
  /** The token `tenant` uses, and a second one of the same account (the one the matrix tries to revoke). */
  tokenId: string;
  secondTokenId: string;
  secondToken: string;
  /** Private twins: the acting twin, a sibling and the embarking twin. */
  twinId: string;
  siblingTwinId: string;
  /** A public twin (with a public quest): what another organization may legitimately see. */
  publicTwinId: string;
  privateQuestId: string;
  privateTaskId: string;
  privateImageId: string;
  publicQuestId: string;
  publicImageId: string;
  /** The sibling's copy of the public quest (private). */
  copyQuestId: string;
  eventIds: string[];
  /** A webhook of the organization (its secret, description and deliveries are the organization's alone). */
  webhookId: string;
  /** A geofence of the organization, around the world's twins (13.4, 52.5). */
  geofenceId: string;
  /** Ids other organizations must never see. */
  privateIds: string[];
  /** Names other organizations must never see. */
  privateNames: string[];
  /** Ids other organizations may see (public twin, public quest and its image and task). */
  publicIds: string[];
}

const adminHeaders = { authorization: `Token ${ADMIN_TOKEN}`, 'content-type': JSON_API };

async function expectStatus(response: Promise<LightMyRequestResponse> | LightMyRequestResponse, status: number, what: string) {
  const done = await response;
  if (done.statusCode !== status) throw new Error(`world: ${what} answered ${done.statusCode}: ${done.body}`);
  return done.json().data as { id: string; attributes: Record<string, unknown> };
}

/** Builds one organization's world; `label` (e.g. "A") goes into every name. */
export async function buildWorld(service: TestApp, label: string): Promise<World> {
  const marker = `${label}-${randomBytes(6).toString('hex')}`;
  const names: string[] = [];
  const name = (what: string) => {
    names.push(`${marker} ${what}`);
    return `${marker} ${what}`;
  };
  const inject = (options: InjectOptions) => service.inject(options);

  const organization = await expectStatus(
    inject({ method: 'POST', url: '/admin/organizations/', headers: adminHeaders, payload: document({ type: 'organizations', attributes: { name: name('organization') } }) }),
    201,
    'create organization',
  );
  const account = await expectStatus(
    inject({
      method: 'POST',
      url: '/admin/accounts/',
      headers: adminHeaders,
      payload: document({
        type: 'accounts',
        attributes: { name: name('account') },
        relationships: { organizations: { data: [{ type: 'organizations', id: organization.id }] } },
      }),
    }),
    201,
    'create account',
  );
  const mint = () => expectStatus(inject({ method: 'POST', url: `/admin/accounts/${account.id}/tokens/`, headers: adminHeaders }), 201, 'mint token');
  const token = await mint();
  const second = await mint();

  const orgHeaders = { authorization: `Token ${token.attributes.token as string}`, 'x-organization': organization.id, 'content-type': JSON_API };
  const createTwin = (attributes: Record<string, unknown>) =>
    expectStatus(inject({ method: 'POST', url: '/my/twins/', headers: orgHeaders, payload: document({ type: 'twins', attributes }) }), 201, 'create twin');
  const twin = await createTwin({ name: name('twin'), description: name('twin description'), location: { type: 'Point', coordinates: [13.4, 52.5] } });
  const sibling = await createTwin({ name: name('sibling twin'), personality: { characteristics: [name('trait')] } });
  const publicTwin = await createTwin({ name: `${label} public twin`, public: true, location: { type: 'Point', coordinates: [13.41, 52.51] } });

  const tenant = new TestTenant({
    organizationId: organization.id,
    accountId: account.id,
    twinId: twin.id,
    tokenId: token.id,
    token: token.attributes.token as string,
  });
  const asTwin = (twinId: string, extra: Record<string, string> = {}) => ({ ...orgHeaders, 'x-twin': twinId, ...extra });
  const upload = () =>
    expectStatus(inject({ method: 'POST', url: '/images/', headers: { ...orgHeaders, 'content-type': 'image/png' }, payload: png(2, 3) }), 201, 'upload image');

  const privateImage = await upload();
  const privateQuest = await expectStatus(
    inject({
      method: 'POST',
      url: '/quests/',
      headers: asTwin(twin.id),
      payload: document({ type: 'quests', attributes: { name: name('private quest'), summary: name('summary'), 'summary-image': privateImage.id, price: '1.50' } }),
    }),
    201,
    'create private quest',
  );
  const privateTask = await expectStatus(
    inject({
      method: 'POST',
      url: `/quests/${privateQuest.id}/tasks/`,
      headers: asTwin(twin.id),
      payload: document({ type: 'tasks', attributes: { name: name('task') }, relationships: { place: { data: { type: 'twins', id: sibling.id } } } }),
    }),
    201,
    'create task',
  );

  const publicImage = await upload();
  const publicQuest = await expectStatus(
    inject({ method: 'POST', url: '/quests/', headers: asTwin(publicTwin.id), payload: document({ type: 'quests', attributes: { name: `${label} public quest`, 'summary-image': publicImage.id, price: 2 } }) }),
    201,
    'create public quest',
  );
  await expectStatus(
    inject({ method: 'POST', url: `/quests/${publicQuest.id}/tasks/`, headers: asTwin(publicTwin.id), payload: document({ type: 'tasks', attributes: { name: `${label} public task` }, relationships: { place: { data: { type: 'twins', id: publicTwin.id } } } }) }),
    201,
    'create public task',
  );
  await expectStatus(
    inject({ method: 'PATCH', url: `/quests/${publicQuest.id}/`, headers: asTwin(publicTwin.id), payload: document({ type: 'quests', id: publicQuest.id, attributes: { public: true } }) }),
    200,
    'publish quest',
  );
  const copy = await expectStatus(inject({ method: 'POST', url: `/quests/${publicQuest.id}/embark/`, headers: asTwin(sibling.id) }), 201, 'embark');

  const eventIds: string[] = [];
  for (const what of ['first event', 'second event']) {
    const event = await expectStatus(
      inject({ method: 'POST', url: '/events/', headers: asTwin(twin.id), payload: document({ type: 'events', attributes: { name: name(what), category: name('category'), data: { secret: name('data') } } }) }),
      201,
      'create event',
    );
    eventIds.push(event.id);
  }
  // An address that needs no DNS (the URL check resolves names).
  const webhook = await expectStatus(
    inject({ method: 'POST', url: '/webhooks/', headers: orgHeaders, payload: document({ type: 'webhooks', attributes: { url: 'https://93.184.215.14/hooks', events: ['event.created'], description: name('webhook') } }) }),
    201,
    'create webhook',
  );
  const geofence = await expectStatus(
    inject({
      method: 'POST',
      url: '/geofences/',
      headers: orgHeaders,
      payload: document({ type: 'geofences', attributes: { name: name('geofence'), geometry: { type: 'Polygon', coordinates: [[[13, 52], [14, 52], [14, 53], [13, 52]]] } } }),
    }),
    201,
    'create geofence',
  );

  return {
    label,
    marker,
    tenant,
    organizationId: organization.id,
    accountId: account.id,
    tokenId: token.id,
    secondTokenId: second.id,
    secondToken: second.attributes.token as string,
    twinId: twin.id,
    siblingTwinId: sibling.id,
    publicTwinId: publicTwin.id,
    privateQuestId: privateQuest.id,
    privateTaskId: privateTask.id,
    privateImageId: privateImage.id,
    publicQuestId: publicQuest.id,
    publicImageId: publicImage.id,
    copyQuestId: copy.id,
    eventIds,
    webhookId: webhook.id,
    geofenceId: geofence.id,
    // The organization id is not private: the public twin's resource names it.
    privateIds: [account.id, token.id, second.id, twin.id, sibling.id, privateQuest.id, privateTask.id, privateImage.id, copy.id, ...eventIds, webhook.id, geofence.id],
    // Every private name contains the marker; public names use only the label.
    privateNames: names,
    publicIds: [organization.id, publicTwin.id, publicQuest.id, publicImage.id],
  };
}

/** The tables that hold tenant data, and how a world's rows are found in each. */
const SCOPES: Record<string, (world: string) => string> = {
  organizations: (o) => `id = ${o}`,
  accounts: (o) => `id IN (SELECT account_id FROM memberships WHERE organization_id = ${o})`,
  access_tokens: (o) => `account_id IN (SELECT account_id FROM memberships WHERE organization_id = ${o})`,
  quest_tasks: (o) => `quest_id IN (SELECT id FROM quests WHERE organization_id = ${o})`,
  webhook_deliveries: (o) => `webhook_id IN (SELECT id FROM webhooks WHERE organization_id = ${o})`,
  webhook_attempts: (o) => `webhook_id IN (SELECT id FROM webhooks WHERE organization_id = ${o})`,
  revenue_entries: (o) => `quest_id IN (SELECT id FROM quests WHERE organization_id = ${o}) OR twin_id IN (SELECT id FROM twins WHERE organization_id = ${o})`,
  streamed_twins: (o) => `twin_id IN (SELECT id FROM twins WHERE organization_id = ${o})`,
};

/**
 * Tables that hold no tenant data: service_keys holds the service's own secrets (the cursor key),
 * shared by every tenant; change_log_state one number, how far the change log was pruned.
 */
const NOT_TENANT_DATA = new Set(['migrations', 'schema_migrations', 'spatial_ref_sys', 'typeorm_metadata', 'query_result_cache', 'service_keys', 'change_log_state']);

/**
 * Stops the housekeeping that rewrites rows without changing what any request sees (the tile grid's
 * fold rewrites twin_tile_cells every second), so tests comparing snapshots of the tables see only what
 * requests did.
 */
export async function holdHousekeeping(service: TestApp): Promise<void> {
  await service.app.get(TileGridFold).stop();
}

/**
 * The tenant tables, discovered from information_schema (not a hand-kept list): a table with an
 * `organization_id` column is scoped by it; the others need a rule in SCOPES, else this throws, so a
 * table added later is covered or breaks the test.
 */
export async function tenantTables(service: TestApp): Promise<{ table: string; where: (org: string) => string }[]> {
  const rows: { table_name: string; has_org: boolean }[] = await service.dataSource.query(
    `SELECT t.table_name,
            EXISTS (SELECT 1 FROM information_schema.columns c
                     WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name AND c.column_name = 'organization_id') AS has_org
       FROM information_schema.tables t
      WHERE t.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
      ORDER BY t.table_name`,
  );
  const tables: { table: string; where: (org: string) => string }[] = [];
  const unknown: string[] = [];
  for (const { table_name: table, has_org: hasOrg } of rows) {
    if (NOT_TENANT_DATA.has(table)) continue;
    if (SCOPES[table]) tables.push({ table, where: SCOPES[table] });
    else if (hasOrg) tables.push({ table, where: (o) => `organization_id = ${o}` });
    else unknown.push(table);
  }
  if (unknown.length > 0) throw new Error(`tables without an isolation scope rule (add one to SCOPES in test/support/world.ts): ${unknown.join(', ')}`);
  return tables;
}

/** One digest per tenant table of the rows of the given organization (one SQL round trip). */
export async function snapshotRows(service: TestApp, tables: { table: string; where: (org: string) => string }[], organizationId: string): Promise<Record<string, string>> {
  const sql = tables
    .map(({ table, where }) => `SELECT '${table}' AS name, count(*)::int AS n, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS digest FROM "${table}" t WHERE ${where('$1::uuid')}`)
    .join(' UNION ALL ');
  const rows: { name: string; n: number; digest: string }[] = await service.dataSource.query(sql, [organizationId]);
  return Object.fromEntries(rows.map((row) => [row.name, `${row.n}:${row.digest}`]));
}
