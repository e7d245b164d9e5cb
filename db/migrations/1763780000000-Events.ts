import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Timeline events (docs/API.md, section 14) and the idempotency keys of `POST /events/`.
 *
 * - `events.id` is a UUIDv7 made by the service, so ids sort by creation time (the stream's
 *   `Last-Event-ID` replay reads `id > $last`).
 * - `events_timeline_idx` serves the timeline: one twin, newest first, with `id` as the tie-break of
 *   equal timestamps (rows of one transaction share `now()`).
 * - An idempotency key is scoped to the acting twin. The unique primary key is what makes concurrent
 *   retries safe: the key row is claimed with `INSERT … ON CONFLICT` in the event's own transaction.
 *   Keys are kept at least 24 hours; older ones are overwritten on reuse and purged opportunistically.
 */
export class Events1763780000000 implements MigrationInterface {
  name = 'Events1763780000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE events (
        id               uuid PRIMARY KEY,
        organization_id  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        twin_id          uuid NOT NULL REFERENCES twins (id) ON DELETE CASCADE,
        name             varchar(255) NOT NULL,
        category         varchar(255) NOT NULL,
        data             jsonb NOT NULL DEFAULT '{}',
        "timestamp"      timestamptz(6) NOT NULL DEFAULT now(),
        modified         timestamptz(6) NOT NULL DEFAULT now(),
        CONSTRAINT events_data_object CHECK (jsonb_typeof(data) = 'object')
      )`);
    await db.query(`CREATE INDEX events_timeline_idx ON events (twin_id, "timestamp" DESC, id DESC)`);
    await db.query(`CREATE INDEX events_organization_idx ON events (organization_id)`);

    await db.query(`
      CREATE TABLE idempotency_keys (
        twin_id          uuid NOT NULL REFERENCES twins (id) ON DELETE CASCADE,
        key              varchar(255) NOT NULL,
        organization_id  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        request_hash     char(64) NOT NULL,
        response_status  smallint,
        response_body    jsonb,
        event_id         uuid,
        created          timestamptz(6) NOT NULL DEFAULT now(),
        CONSTRAINT idempotency_keys_pkey PRIMARY KEY (twin_id, key)
      )`);
    await db.query(`CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE idempotency_keys`);
    await db.query(`DROP TABLE events`);
  }
}
