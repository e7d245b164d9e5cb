import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The schema a move to Citus (distribution column `organization_id`, docs/SCALING.md) needs, made now so
 * the move is a set of `create_distributed_table` calls and not a rewrite:
 *
 * - `organization_id` on the four tables that lacked it, backfilled from the parent row: `quest_tasks`
 *   (its quest's), `revenue_entries` (the earning quest's: the entry is its creator's revenue, read by
 *   that twin, in that organization), `webhook_deliveries` and `webhook_attempts` (their webhook's).
 * - `UNIQUE (organization_id, id)` on the tables referenced within an organization (twins, quests,
 *   webhooks) and on events. The primary keys stay `id` alone: a client-chosen id taken in any
 *   organization is still a 409. `events_organization_idx` and `quests_organization_idx` (organization_id
 *   alone) are dropped: the new unique indexes lead with the same column.
 * - Same-organization foreign keys include `organization_id`, each keeping its ON DELETE. The lookups
 *   their cascades make (`organization_id = $1 AND twin_id = $2`, …) use the existing indexes that lead
 *   with the referencing id (events_timeline_idx, idempotency_keys_pkey, quests_twin_idx,
 *   quest_tasks_quest_idx, revenue_entries_quest_idx / _twin_idx, webhook_deliveries_webhook_idx,
 *   webhook_attempts_webhook_idx), so none is added.
 * - A table with a composite key keeps no key of its own to `organizations`: its parent's proves the
 *   organization exists and cascades its deletion (events, idempotency keys and quests lose theirs; the
 *   four new columns get none), so an insert checks one key, not two.
 * - The webhook outbox trigger writes the delivery's `organization_id`.
 *
 * Foreign keys that cross organizations by nature stay single-column (docs/SCALING.md lists them).
 * Every new composite key is checked against the existing rows when it is added: a row whose
 * organization differs from its parent's fails the migration instead of being carried over.
 */
export class CitusReady1763900000000 implements MigrationInterface {
  name = 'CitusReady1763900000000';

  async up(db: QueryRunner): Promise<void> {
    for (const table of ['twins', 'quests', 'webhooks', 'events']) {
      await db.query(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_organization_id_id_key UNIQUE (organization_id, id)`);
    }
    await db.query(`DROP INDEX events_organization_idx`);
    await db.query(`DROP INDEX quests_organization_idx`);

    await db.query(`ALTER TABLE quest_tasks ADD COLUMN organization_id uuid`);
    await db.query(`UPDATE quest_tasks k SET organization_id = q.organization_id FROM quests q WHERE q.id = k.quest_id`);
    await db.query(`ALTER TABLE revenue_entries ADD COLUMN organization_id uuid`);
    await db.query(`UPDATE revenue_entries r SET organization_id = q.organization_id FROM quests q WHERE q.id = r.quest_id`);
    await db.query(`ALTER TABLE webhook_deliveries ADD COLUMN organization_id uuid`);
    await db.query(`UPDATE webhook_deliveries d SET organization_id = w.organization_id FROM webhooks w WHERE w.id = d.webhook_id`);
    await db.query(`ALTER TABLE webhook_attempts ADD COLUMN organization_id uuid`);
    await db.query(`UPDATE webhook_attempts a SET organization_id = w.organization_id FROM webhooks w WHERE w.id = a.webhook_id`);
    for (const table of ['quest_tasks', 'revenue_entries', 'webhook_deliveries', 'webhook_attempts']) {
      await db.query(`ALTER TABLE ${table} ALTER COLUMN organization_id SET NOT NULL`);
    }

    for (const [table, column, target, old] of COMPOSITE) {
      await db.query(`ALTER TABLE ${table} DROP CONSTRAINT ${old},
        ADD CONSTRAINT ${table}_organization_id_${column}_fkey FOREIGN KEY (organization_id, ${column}) REFERENCES ${target} (organization_id, id) ON DELETE CASCADE`);
    }
    // A composite key already proves the organization exists (its parent row's does) and cascades its
    // deletion through the parent: the single-column key to organizations was a second check on every
    // insert (1,000 of them in a batch of events) and a second cascade path.
    for (const table of REDUNDANT_ORGANIZATION_KEYS) await db.query(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_organization_id_fkey`);

    await db.query(OUTBOX('webhook_deliveries (organization_id, webhook_id, position, kind, body)', 'w.organization_id, w.id'));
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(OUTBOX('webhook_deliveries (webhook_id, position, kind, body)', 'w.id'));
    for (const table of REDUNDANT_ORGANIZATION_KEYS) {
      await db.query(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations (id) ON DELETE CASCADE`);
    }
    for (const [table, column, target, old] of COMPOSITE) {
      await db.query(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_organization_id_${column}_fkey,
        ADD CONSTRAINT ${old} FOREIGN KEY (${column}) REFERENCES ${target} (id) ON DELETE CASCADE`);
    }
    for (const table of ['quest_tasks', 'revenue_entries', 'webhook_deliveries', 'webhook_attempts']) {
      await db.query(`ALTER TABLE ${table} DROP COLUMN organization_id`);
    }
    await db.query(`CREATE INDEX quests_organization_idx ON quests (organization_id)`);
    await db.query(`CREATE INDEX events_organization_idx ON events (organization_id)`);
    for (const table of ['twins', 'quests', 'webhooks', 'events']) {
      await db.query(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_organization_id_id_key`);
    }
  }
}

/** Tables whose `organization_id → organizations` key a composite same-organization key makes redundant. */
const REDUNDANT_ORGANIZATION_KEYS = ['events', 'idempotency_keys', 'quests'];

/** The same-organization foreign keys: table, referencing column, referenced table, the single-column key it replaces. */
const COMPOSITE: [table: string, column: string, target: string, old: string][] = [
  ['events', 'twin_id', 'twins', 'events_twin_id_fkey'],
  ['idempotency_keys', 'twin_id', 'twins', 'idempotency_keys_twin_id_fkey'],
  ['quests', 'twin_id', 'twins', 'quests_twin_id_fkey'],
  ['quest_tasks', 'quest_id', 'quests', 'quest_tasks_quest_id_fkey'],
  ['revenue_entries', 'quest_id', 'quests', 'revenue_entries_quest_id_fkey'],
  ['revenue_entries', 'twin_id', 'twins', 'revenue_entries_twin_id_fkey'],
  ['webhook_deliveries', 'webhook_id', 'webhooks', 'webhook_deliveries_webhook_id_fkey'],
  ['webhook_attempts', 'webhook_id', 'webhooks', 'webhook_attempts_webhook_id_fkey'],
];

/** The webhook outbox trigger's function (migration Webhooks), inserting `columns` with `values` from each matching webhook `w`. */
const OUTBOX = (columns: string, values: string) => `CREATE OR REPLACE FUNCTION webhooks_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        queued integer;
      BEGIN
        INSERT INTO ${columns}
        SELECT ${values}, c.position, c.kind,
               '{"type":' || to_json(c.kind::text)::text
               || ',"timestamp":' || to_json(to_char(c.changed AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))::text
               || ',"data":' || c.resource || '}'
          FROM new_changes c
          JOIN webhooks w ON w.organization_id = c.organization_id AND w.enabled AND c.kind = ANY (w.events);
        GET DIAGNOSTICS queued = ROW_COUNT;
        IF queued > 0 THEN
          PERFORM pg_notify('webhook_deliveries', '');
        END IF;
        RETURN NULL;
      END $$`;
