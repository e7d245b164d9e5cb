import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Timeline changes are announced (NOTIFY) only for twins someone streams. A transaction that notifies
 * holds PostgreSQL's notification-queue lock from its pre-commit through its WAL flush, so every
 * notifying transaction of the database commits one at a time: a fleet of moving twins that nobody
 * watches queued on it, and the reads waited for the pool connections those moves held.
 *
 * - `streamed_twins`: a row per twin and instance with an open stream of it, kept alive by the
 *   instance (`expires`), deleted when its last stream closes.
 * - `twin_is_streamed(twin)`: what the writing statements ask before they notify. PL/pgSQL and VOLATILE
 *   so its query takes a snapshot of its own when it runs, after the statement took the twin's
 *   change-log lock: a registration takes that lock too, so a move either committed before the
 *   registration (and the stream's replay reads it) or sees it and notifies.
 */
export class StreamedTwins1764000000000 implements MigrationInterface {
  name = 'StreamedTwins1764000000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE TABLE streamed_twins (
      twin_id uuid NOT NULL,
      instance_id uuid NOT NULL,
      expires timestamptz NOT NULL,
      CONSTRAINT streamed_twins_pkey PRIMARY KEY (twin_id, instance_id))`);
    await db.query(`CREATE INDEX streamed_twins_instance_idx ON streamed_twins (instance_id)`);
    await db.query(`CREATE FUNCTION twin_is_streamed(twin uuid) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        RETURN EXISTS (SELECT FROM streamed_twins WHERE twin_id = twin);
      END $$`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP FUNCTION twin_is_streamed(uuid)`);
    await db.query(`DROP TABLE streamed_twins`);
  }
}
