import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Page 1 of a timeline as fast at 20,000,000 events as at 1,000,000 (issue 19). An offset page answers
 * its exact count, and `count(*)` of a twin's timeline costs what the twin has: at 20M events a typical
 * twin has 2,000 of them and its first page ran at half the speed it had at 1M.
 *
 * - `twin_event_counts`: per timeline (organization, twin), how many events it holds. Kept like
 *   `twin_counts` (migration TwinCounts): statement-level triggers with transition tables, in the writing
 *   transaction, so the number read is exactly what `count(*)` would say in the same snapshot. A batch of
 *   a thousand events is one upsert. Rows change in key order (no deadlock between writers), and a
 *   timeline that empties (its twin deleted, its events past the retention) loses its row.
 * - Events never move between timelines (no statement sets their `organization_id` or `twin_id`);
 *   `events_timeline_fixed` refuses a statement that would, so the counts cannot drift. It only fires
 *   for statements that name those columns: a PATCH pays nothing.
 * - Not declared in src/database/schema (like `twin_counts`): no statement of the service writes it,
 *   and this migration owns its shape.
 */
export class TwinEventCounts1763910000000 implements MigrationInterface {
  name = 'TwinEventCounts1763910000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE twin_event_counts (
        organization_id  uuid NOT NULL,
        twin_id          uuid NOT NULL,
        total            bigint NOT NULL,
        PRIMARY KEY (organization_id, twin_id)
      )`);
    await db.query(`CREATE FUNCTION twin_event_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO twin_event_counts AS c (organization_id, twin_id, total)
        SELECT organization_id, twin_id, count(*) FROM new_rows GROUP BY organization_id, twin_id ORDER BY organization_id, twin_id
        ON CONFLICT (organization_id, twin_id) DO UPDATE SET total = c.total + EXCLUDED.total;
        RETURN NULL;
      END $$`);
    await db.query(`CREATE FUNCTION twin_event_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO twin_event_counts AS c (organization_id, twin_id, total)
        SELECT organization_id, twin_id, -count(*) FROM old_rows GROUP BY organization_id, twin_id ORDER BY organization_id, twin_id
        ON CONFLICT (organization_id, twin_id) DO UPDATE SET total = c.total + EXCLUDED.total;
        DELETE FROM twin_event_counts c
         USING (SELECT DISTINCT organization_id, twin_id FROM old_rows) o
         WHERE c.organization_id = o.organization_id AND c.twin_id = o.twin_id AND c.total = 0;
        RETURN NULL;
      END $$`);
    await db.query(`CREATE FUNCTION twin_event_counts_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM twin_event_counts;
        RETURN NULL;
      END $$`);
    await db.query(`CREATE FUNCTION events_timeline_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'an event cannot move to another timeline (organization or twin)' USING ERRCODE = 'check_violation';
      END $$`);
    await db.query(`CREATE TRIGGER twin_event_counts_insert AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION twin_event_counts_insert()`);
    await db.query(`CREATE TRIGGER twin_event_counts_delete AFTER DELETE ON events REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION twin_event_counts_delete()`);
    await db.query(`CREATE TRIGGER twin_event_counts_truncate AFTER TRUNCATE ON events FOR EACH STATEMENT EXECUTE FUNCTION twin_event_counts_truncate()`);
    await db.query(`CREATE TRIGGER events_timeline_fixed BEFORE UPDATE OF organization_id, twin_id ON events FOR EACH ROW
      WHEN (OLD.organization_id IS DISTINCT FROM NEW.organization_id OR OLD.twin_id IS DISTINCT FROM NEW.twin_id)
      EXECUTE FUNCTION events_timeline_fixed()`);
    // Writers wait while the counts are first taken, so none is missed or counted twice.
    await db.query(`LOCK TABLE events IN SHARE MODE`);
    await db.query(`
      INSERT INTO twin_event_counts (organization_id, twin_id, total)
      SELECT organization_id, twin_id, count(*) FROM events GROUP BY organization_id, twin_id`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER events_timeline_fixed ON events`);
    await db.query(`DROP TRIGGER twin_event_counts_truncate ON events`);
    await db.query(`DROP TRIGGER twin_event_counts_delete ON events`);
    await db.query(`DROP TRIGGER twin_event_counts_insert ON events`);
    await db.query(`DROP FUNCTION events_timeline_fixed()`);
    await db.query(`DROP FUNCTION twin_event_counts_truncate()`);
    await db.query(`DROP FUNCTION twin_event_counts_delete()`);
    await db.query(`DROP FUNCTION twin_event_counts_insert()`);
    await db.query(`DROP TABLE twin_event_counts`);
  }
}
