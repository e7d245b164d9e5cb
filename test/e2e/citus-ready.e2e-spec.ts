import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { QuestClient } from '../support/quests';
import { document, JSON_API, TestApp, type TestTenant } from '../support/test-app';

/**
 * The schema a move to Citus needs (migration CitusReady, docs/SCALING.md "Citus"), read from the
 * catalog, and the organization the writers store in the columns it added.
 */

/** Every table the plan distributes by organization_id. */
const DISTRIBUTED = [
  'twins',
  'events',
  'idempotency_keys',
  'quests',
  'images',
  'webhooks',
  'changes',
  'twin_counts',
  'twin_tile_cells',
  'positions',
  'quest_tasks',
  'revenue_entries',
  'webhook_deliveries',
  'webhook_attempts',
  'geofences',
];

/** The tables referenced within an organization: `UNIQUE (organization_id, id)`, the primary key at the move. */
const COMPOSITE_KEYS = ['twins', 'quests', 'webhooks', 'events', 'geofences'];

/** Same-organization references: `(organization_id, column) → target (organization_id, id)`, with their ON DELETE. */
const SAME_ORGANIZATION: { table: string; column: string; target: string }[] = [
  { table: 'events', column: 'twin_id', target: 'twins' },
  { table: 'idempotency_keys', column: 'twin_id', target: 'twins' },
  { table: 'positions', column: 'twin_id', target: 'twins' },
  { table: 'quests', column: 'twin_id', target: 'twins' },
  { table: 'quest_tasks', column: 'quest_id', target: 'quests' },
  { table: 'revenue_entries', column: 'quest_id', target: 'quests' },
  { table: 'revenue_entries', column: 'twin_id', target: 'twins' },
  { table: 'webhook_deliveries', column: 'webhook_id', target: 'webhooks' },
  { table: 'webhook_attempts', column: 'webhook_id', target: 'webhooks' },
];

/** References that cross organizations by nature: single-column keys the move drops (docs/SCALING.md lists what guards them then). */
const CROSS_ORGANIZATION = [
  'quest_tasks.place_twin_id → twins',
  'quests.original_id → quests',
  'quests.summary_image_id → images',
  'revenue_entries.embarking_twin_id → twins',
  'revenue_entries.copy_id → quests',
];

interface Constraint {
  table: string;
  name: string;
  type: string;
  columns: string[];
  target: string | null;
  target_columns: string[] | null;
  on_delete: string;
}

async function constraints(service: TestApp): Promise<Constraint[]> {
  return service.dataSource.query(
    `SELECT c.conrelid::regclass::text AS table, c.conname AS name, c.contype::text AS type,
            (SELECT array_agg(a.attname::text ORDER BY k.n) FROM unnest(c.conkey) WITH ORDINALITY k (attnum, n)
               JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum) AS columns,
            c.confrelid::regclass::text AS target,
            (SELECT array_agg(a.attname::text ORDER BY k.n) FROM unnest(c.confkey) WITH ORDINALITY k (attnum, n)
               JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum) AS target_columns,
            c.confdeltype::text AS on_delete
       FROM pg_constraint c
      WHERE c.connamespace = current_schema()::regnamespace AND c.contype IN ('p', 'u', 'f')`,
  );
}

describe('Citus readiness: the catalog', () => {
  let service: TestApp;
  let all: Constraint[];

  beforeAll(async () => {
    service = await TestApp.start();
    all = await constraints(service);
  });
  afterAll(() => service.close());

  it('every distributed table has organization_id NOT NULL', async () => {
    const rows: { table_name: string; is_nullable: string; data_type: string }[] = await service.dataSource.query(
      `SELECT table_name, is_nullable, data_type FROM information_schema.columns
        WHERE table_schema = current_schema() AND column_name = 'organization_id' AND table_name = ANY ($1)`,
      [DISTRIBUTED],
    );
    expect(Object.fromEntries(rows.map((row) => [row.table_name, `${row.data_type} ${row.is_nullable}`]))).toEqual(
      Object.fromEntries(DISTRIBUTED.map((table) => [table, 'uuid NO'])),
    );
  });

  it('the referenced tables have UNIQUE (organization_id, id); their primary keys stay id (a taken id is a 409 in any organization)', () => {
    for (const table of COMPOSITE_KEYS) {
      const keys = all.filter((c) => c.table === table && (c.type === 'u' || c.type === 'p')).map((c) => `${c.type} ${c.columns.join(',')}`);
      expect({ table, keys: keys.sort() }).toEqual({ table, keys: ['p id', 'u organization_id,id'] });
    }
  });

  it('every same-organization foreign key includes organization_id and keeps ON DELETE CASCADE', () => {
    for (const { table, column, target } of SAME_ORGANIZATION) {
      const found = all.filter((c) => c.type === 'f' && c.table === table && c.target === target && c.columns.includes(column));
      expect({ table, column, found: found.map((c) => ({ columns: c.columns, target_columns: c.target_columns, on_delete: c.on_delete })) }).toEqual({
        table,
        column,
        found: [{ columns: ['organization_id', column], target_columns: ['organization_id', 'id'], on_delete: 'c' }],
      });
    }
  });

  it('a foreign key between distributed tables either includes organization_id or is a listed cross-organization reference', () => {
    const between = all.filter((c) => c.type === 'f' && DISTRIBUTED.includes(c.table) && DISTRIBUTED.includes(c.target ?? ''));
    const single = between.filter((c) => !c.columns.includes('organization_id')).map((c) => `${c.table}.${c.columns.join(',')} → ${c.target}`);
    expect(single.sort()).toEqual([...CROSS_ORGANIZATION].sort());
    // Foreign keys to organizations (a reference table at the move) are allowed as they are.
    for (const c of between.filter((c) => c.columns.includes('organization_id'))) expect(c.columns[0]).toBe('organization_id');
  });

  it('a table with a composite key has no key of its own to organizations (its parent proves and cascades the organization)', () => {
    const composite = new Set(SAME_ORGANIZATION.map((reference) => reference.table));
    const own = all.filter((c) => c.type === 'f' && composite.has(c.table) && c.target === 'organizations').map((c) => c.name);
    expect(own).toEqual([]);
  });

  it('the composite keys cascade through an index of the referencing table that leads with the referencing column(s)', async () => {
    const indexes: { table: string; columns: string[] }[] = await service.dataSource.query(
      `SELECT i.indrelid::regclass::text AS table,
              (SELECT array_agg(a.attname::text ORDER BY k.n) FROM unnest(i.indkey::int2[]) WITH ORDINALITY k (attnum, n)
                 JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum) AS columns
         FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
        WHERE c.relnamespace = current_schema()::regnamespace AND i.indpred IS NULL`,
    );
    for (const { table, column } of SAME_ORGANIZATION) {
      const usable = indexes.filter((i) => i.table === table && (i.columns[0] === column || (i.columns[0] === 'organization_id' && i.columns[1] === column)));
      expect({ table, column, usable: usable.length > 0 }).toEqual({ table, column, usable: true });
    }
  });

  it('refuses a row whose organization is not its parent row’s (23503)', async () => {
    const alpha = await service.tenant({ organization: 'Citus alpha' });
    const beta = await service.tenant({ organization: 'Citus beta' });
    await expect(
      service.dataSource.query(`INSERT INTO events (id, organization_id, twin_id, name, category) VALUES ($1, $2, $3, 'walk', 'activity')`, [
        randomUUID(),
        alpha.organizationId,
        beta.twinId,
      ]),
    ).rejects.toMatchObject({ driverError: expect.objectContaining({ code: '23503', constraint: 'events_organization_id_twin_id_fkey' }) });
  });
});

describe('Citus readiness: what the writers store', () => {
  let service: TestApp;
  let q: QuestClient;
  let receiver: Server;
  let received = 0;

  beforeAll(async () => {
    service = await TestApp.start({ WEBHOOKS_WORKER: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_POLL_MS: '100' });
    q = new QuestClient(service);
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received++;
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await service?.close();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  });

  const organizationOf = async (table: string, where: string, params: unknown[]): Promise<string[]> => {
    const rows: { organization_id: string }[] = await service.dataSource.query(`SELECT organization_id FROM ${table} WHERE ${where} ORDER BY organization_id`, params);
    return rows.map((row) => row.organization_id);
  };

  /** `POST /events/` on the tenant's twin, with an idempotency key (so a key row is written too); the event's id. */
  const postEvent = async (tenant: TestTenant): Promise<string> => {
    const event = await service.inject({
      method: 'POST',
      url: '/events/',
      headers: { ...tenant.headers({ twin: true }), 'content-type': JSON_API, 'idempotency-key': randomUUID() },
      payload: document({ type: 'events', attributes: { name: 'walk', category: 'activity', data: {} } }),
    });
    expect(event.statusCode).toBe(201);
    return event.json().data.id as string;
  };

  /** A webhook of the tenant's organization for `event.created`, delivering to the local receiver; its id. */
  const createWebhook = async (tenant: TestTenant): Promise<string> => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const created = await service.inject({
      method: 'POST',
      url: '/webhooks/',
      headers: { ...tenant.headers(), 'content-type': JSON_API },
      payload: document({ type: 'webhooks', attributes: { url, events: ['event.created'] } }),
    });
    expect(created.statusCode).toBe(201);
    return created.json().data.id as string;
  };

  /** Waits until the worker has recorded an attempt of the webhook. */
  const attempted = async (webhook: string): Promise<void> => {
    const deadline = Date.now() + 15_000;
    while ((await organizationOf('webhook_attempts', 'webhook_id = $1', [webhook])).length === 0) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the attempt');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('quest tasks carry their quest’s organization, copies the embarker’s; a revenue entry the creator’s', async () => {
    const creator = await service.tenant({ organization: 'Citus creator' });
    const supplier = await service.tenant({ organization: 'Citus supplier' });
    const buyer = await service.tenant({ organization: 'Citus buyer' });
    // A public quest of a public twin: readable, so embarkable, from another organization.
    await q.setTwinPublic(creator.twinId, true);
    // The task's place is a public twin of a third organization: a reference across organizations.
    const place = await q.twin(supplier, { name: 'Citus café', public: true });
    const quest = await q.create(creator, { name: 'Citus walk', price: '1.50' });
    expect((await q.addTask(creator, quest.id, { name: 'Coffee' }, place)).statusCode).toBe(201);
    expect((await q.addTask(creator, quest.id, { name: 'Walk' })).statusCode).toBe(201);
    expect((await q.patch(creator, quest.id, { public: true })).statusCode).toBe(200);
    expect(await organizationOf('quest_tasks', 'quest_id = $1', [quest.id])).toEqual([creator.organizationId, creator.organizationId]);

    const embarked = await q.embark(buyer, quest.id);
    expect(embarked.statusCode).toBe(201);
    const copy = embarked.json().data.id as string;
    expect(await organizationOf('quests', 'id = $1', [copy])).toEqual([buyer.organizationId]);
    expect(await organizationOf('quest_tasks', 'quest_id = $1', [copy])).toEqual([buyer.organizationId, buyer.organizationId]);
    const entries: { organization_id: string; twin_id: string; embarking_twin_id: string; copy_id: string }[] = await service.dataSource.query(
      `SELECT organization_id, twin_id, embarking_twin_id, copy_id FROM revenue_entries WHERE quest_id = $1`,
      [quest.id],
    );
    expect(entries).toEqual([{ organization_id: creator.organizationId, twin_id: creator.twinId, embarking_twin_id: buyer.twinId, copy_id: copy }]);
  });

  it('deleting an organization removes its rows of every table through the composite keys', async () => {
    const gone = await service.tenant({ organization: 'Citus deleted' });
    const buyer = await service.tenant({ organization: 'Citus buyer of the deleted' });
    await q.setTwinPublic(gone.twinId, true);
    const quest = await q.create(gone, { name: 'Citus gone', price: '1.00' });
    expect((await q.addTask(gone, quest.id, { name: 'Walk' })).statusCode).toBe(201);
    expect((await q.patch(gone, quest.id, { public: true })).statusCode).toBe(200);
    // The revenue entry is the deleted organization's; the copy and its tasks are the buyer's.
    const copy = (await q.embark(buyer, quest.id)).json().data.id as string;
    const webhook = await createWebhook(gone);
    await postEvent(gone);
    await attempted(webhook);
    const tables = [
      'twins',
      'events',
      'idempotency_keys',
      'twin_event_counts',
      'quests',
      'quest_tasks',
      'revenue_entries',
      'webhooks',
      'webhook_deliveries',
      'webhook_attempts',
    ];
    const left = async (): Promise<Record<string, number>> =>
      Object.fromEntries(await Promise.all(tables.map(async (table) => [table, (await organizationOf(table, 'organization_id = $1', [gone.organizationId])).length])));
    expect(Object.entries(await left()).filter(([, n]) => n === 0)).toEqual([]);
    await service.dataSource.query('DELETE FROM organizations WHERE id = $1', [gone.organizationId]);
    expect(await left()).toEqual(Object.fromEntries(tables.map((table) => [table, 0])));
    // The buyer's copy stays, its reference to the deleted original cleared (a cross-organization key).
    expect(await service.dataSource.query('SELECT original_id FROM quests WHERE id = $1', [copy])).toEqual([{ original_id: null }]);
  });

  it('a webhook’s deliveries and attempts carry its organization', async () => {
    const partner = await service.tenant({ organization: 'Citus partner' });
    const webhook = await createWebhook(partner);
    const before = received;
    const event = await postEvent(partner);
    expect(await organizationOf('events', 'id = $1', [event])).toEqual([partner.organizationId]);
    expect(await organizationOf('idempotency_keys', 'twin_id = $1', [partner.twinId])).toEqual([partner.organizationId]);

    await attempted(webhook);
    expect(received).toBeGreaterThan(before);
    expect(await organizationOf('webhook_deliveries', 'webhook_id = $1', [webhook])).toEqual([partner.organizationId]);
    expect(await organizationOf('webhook_attempts', 'webhook_id = $1', [webhook])).toEqual([partner.organizationId]);
  });
});
