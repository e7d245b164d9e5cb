import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks for partners (src/database/schema/webhooks.ts, src/webhooks/, docs/WEBHOOKS.md).
 *
 * - The outbox is written by a statement-level trigger on `changes`, so a delivery commits with its
 *   change or not at all (at least once, nothing for a rolled-back change). The trigger joins the new
 *   rows with the organization's enabled webhooks subscribed to their kind through
 *   `webhooks_organization_idx`: for an organization without webhooks that is one index probe per
 *   statement and no write, which keeps `POST /events/` as fast as before.
 * - The payload is built here once, as text (`{"type","timestamp","data"}`, the resource's committed
 *   JSON spliced in untouched), so every retry signs and sends the same bytes.
 * - `pg_notify('webhook_deliveries')` wakes the workers of every instance when the transaction commits
 *   (and not at all when it rolls back); workers poll too, so a missed notification only delays.
 * - `webhook_deliveries_due_idx (webhook_id, next_attempt)` holds only pending rows: the claim reads the
 *   earliest few of each enabled webhook (so a backlog of one receiver cannot hide another's rows), and
 *   delivered or failed rows cost it nothing.
 */
export class Webhooks1763870000000 implements MigrationInterface {
  name = 'Webhooks1763870000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE webhooks (
        id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL CONSTRAINT webhooks_organization_id_fkey REFERENCES organizations (id) ON DELETE CASCADE,
        url             text NOT NULL,
        events          varchar(32)[] NOT NULL,
        description     varchar(1024),
        enabled         boolean NOT NULL DEFAULT true,
        secret_sealed   bytea NOT NULL,
        created         timestamptz(6) NOT NULL DEFAULT now(),
        modified        timestamptz(6) NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX webhooks_organization_idx ON webhooks (organization_id, created)`);
    await db.query(`
      CREATE TABLE webhook_deliveries (
        id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        webhook_id   uuid NOT NULL CONSTRAINT webhook_deliveries_webhook_id_fkey REFERENCES webhooks (id) ON DELETE CASCADE,
        position     bigint NOT NULL,
        kind         varchar(32) NOT NULL,
        body         text NOT NULL,
        state        varchar(16) NOT NULL DEFAULT 'pending'
                     CONSTRAINT webhook_deliveries_state_check CHECK ("state" IN ('pending', 'delivered', 'failed')),
        attempts     integer NOT NULL DEFAULT 0,
        next_attempt timestamptz(6) DEFAULT now(),
        created      timestamptz(6) NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id)`);
    await db.query(`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (webhook_id, next_attempt) WHERE state = 'pending'`);
    await db.query(`
      CREATE TABLE webhook_attempts (
        id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        webhook_id  uuid NOT NULL CONSTRAINT webhook_attempts_webhook_id_fkey REFERENCES webhooks (id) ON DELETE CASCADE,
        delivery_id uuid NOT NULL,
        kind        varchar(32) NOT NULL,
        attempt     integer NOT NULL,
        status_code integer,
        error       text,
        duration_ms integer NOT NULL,
        attempted   timestamptz(6) NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX webhook_attempts_webhook_idx ON webhook_attempts (webhook_id, attempted)`);
    await db.query(`CREATE FUNCTION webhooks_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        queued integer;
      BEGIN
        INSERT INTO webhook_deliveries (webhook_id, position, kind, body)
        SELECT w.id, c.position, c.kind,
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
      END $$`);
    await db.query(`CREATE TRIGGER changes_webhooks AFTER INSERT ON changes REFERENCING NEW TABLE AS new_changes
      FOR EACH STATEMENT EXECUTE FUNCTION webhooks_outbox()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER changes_webhooks ON changes`);
    await db.query(`DROP FUNCTION webhooks_outbox()`);
    await db.query(`DROP TABLE webhook_attempts`);
    await db.query(`DROP TABLE webhook_deliveries`);
    await db.query(`DROP TABLE webhooks`);
  }
}
