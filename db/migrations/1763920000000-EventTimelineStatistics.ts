import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Timeline pages read in index order however long the timeline (issue 19). Prepared statements run on
 * generic plans, which know no twin: PostgreSQL took `twin_id = $1 AND organization_id = $2` as two
 * independent conditions, expected about one event (100 per twin × 1 in 100 organizations), and chose a
 * bitmap scan and a sort of the twin's whole timeline over a walk of events_timeline_idx that stops at the
 * page: 45 ms instead of 0.15 ms for the first page of a twin with 20,000 events.
 *
 * Functional-dependency statistics tell the planner that the organization follows from the twin (every
 * event is in its twin's organization), so the conjunction is estimated as the twin's events alone.
 * ANALYZE fills them now; autovacuum keeps them (they are a few bytes).
 */
export class EventTimelineStatistics1763920000000 implements MigrationInterface {
  name = 'EventTimelineStatistics1763920000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE STATISTICS events_timeline_stats (dependencies) ON twin_id, organization_id FROM events`);
    await db.query(`ANALYZE events`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP STATISTICS events_timeline_stats`);
  }
}
