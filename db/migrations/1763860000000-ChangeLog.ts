import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The change log (src/database/schema/changes.ts, src/changes/): one row per committed change of an
 * event, twin or quest, written by the changing statement itself, so a change and its row commit
 * together or not at all. Event streams resume from it (`Last-Event-ID` is a position) and webhook
 * deliveries are made from it.
 *
 * - `position` is given by the BEFORE INSERT trigger under a transaction-scoped advisory lock on the
 *   row's twin (or organization, for changes of no twin): a later transaction of the same twin waits
 *   for the earlier one's commit before it draws its number, so within one twin, positions are in
 *   commit order and a reader that has seen position P has seen every earlier change of that twin. A
 *   sequence alone gives numbers in the order they were drawn, which concurrent transactions commit in
 *   any order.
 * - `changes_twin_idx (twin_id, position)` serves the stream's replay; the BRIN index on `changed`
 *   serves the pruning of rows past the retention at nearly no cost per insert (rows arrive in time order).
 * - `change_log_state` remembers how far the log was pruned: a client resuming from before that point
 *   is told to start over (`reset`) rather than silently missing changes.
 */
export class ChangeLog1763860000000 implements MigrationInterface {
  name = 'ChangeLog1763860000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE SEQUENCE changes_position_seq AS bigint`);
    await db.query(`
      CREATE TABLE changes (
        position         bigint PRIMARY KEY,
        organization_id  uuid NOT NULL,
        twin_id          uuid,
        kind             varchar(32) NOT NULL,
        subject_id       uuid NOT NULL,
        name             varchar(255),
        category         varchar(255),
        resource         text NOT NULL,
        changed          timestamptz(6) NOT NULL DEFAULT now()
      )`);
    await db.query(`ALTER SEQUENCE changes_position_seq OWNED BY changes.position`);
    await db.query(`CREATE INDEX changes_twin_idx ON changes (twin_id, position)`);
    await db.query(`CREATE INDEX changes_changed_idx ON changes USING brin (changed)`);
    await db.query(`CREATE FUNCTION changes_position() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended(coalesce(NEW.twin_id, NEW.organization_id)::text, 1763860000000));
        NEW.position := nextval('changes_position_seq');
        RETURN NEW;
      END $$`);
    await db.query(`CREATE TRIGGER changes_position BEFORE INSERT ON changes FOR EACH ROW EXECUTE FUNCTION changes_position()`);
    await db.query(`CREATE TABLE change_log_state (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), pruned_through bigint NOT NULL DEFAULT 0)`);
    await db.query(`INSERT INTO change_log_state DEFAULT VALUES`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE change_log_state`);
    await db.query(`DROP TABLE changes`);
    await db.query(`DROP FUNCTION changes_position()`);
  }
}
