import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Moving twins (docs/API.md, "Positions and tracks"): where a twin was, by the device's clock.
 *
 * - `positions`: one row per twin and `occurred`, partitioned by range of `occurred`, one partition per
 *   UTC day. The service creates the partitions ahead and drops whole partitions past
 *   POSITION_RETENTION_DAYS (src/twins/positions/position-partitions.ts); this migration creates none, so
 *   a table without partitions refuses every row rather than keeping one nobody drops.
 * - The primary key `(organization_id, twin_id, occurred)` is what makes a retried upload a duplicate,
 *   and, covering the columns a track shows, a track page is an index-only range scan of each day's
 *   partition in time order. `organization_id` leads it as the distribution column of docs/SCALING.md.
 * - `(organization_id, twin_id)` references the twin: a twin's deletion removes its track.
 * - `twins.location_occurred`: when the twin's current location was reported. A position moves the twin
 *   only when it is newer; null (a location set before positions existed) is older than any position.
 */
export class Positions1763960000000 implements MigrationInterface {
  name = 'Positions1763960000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE twins ADD COLUMN location_occurred timestamptz`);
    await db.query(`
      CREATE TABLE positions (
        organization_id  uuid NOT NULL,
        twin_id          uuid NOT NULL,
        occurred         timestamptz NOT NULL,
        location         geometry(Point, 4326) NOT NULL,
        accuracy         float8,
        speed            float8,
        heading          float8,
        altitude         float8,
        CONSTRAINT positions_pkey PRIMARY KEY (organization_id, twin_id, occurred) INCLUDE (location, accuracy, speed, heading, altitude),
        CONSTRAINT positions_organization_id_twin_id_fkey FOREIGN KEY (organization_id, twin_id) REFERENCES twins (organization_id, id) ON DELETE CASCADE
      ) PARTITION BY RANGE (occurred)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE positions`);
    await db.query(`ALTER TABLE twins DROP COLUMN location_occurred`);
  }
}
