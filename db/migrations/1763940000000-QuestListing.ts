import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The discovery feed without a join to the twins. A caller sees a public quest when it sees the quest's
 * twin (src/twins/twin-visibility.ts): the twin is shared (public or a supplier) or of the caller's own
 * organization, and a quest's organization is always its twin's (their composite key). The feed's exact
 * count joined every public quest to its twin for the first half of that rule: 2,273 of the feed's 2,932
 * buffers on the bench's data, and more where the quests' twins lie scattered (docs/PERFORMANCE.md).
 *
 * `quests.listed`: the quest is public and its twin is shared, kept in the writing transaction so the feed
 * reads `public AND (listed OR organization_id = <caller's>)` from the quests alone.
 *
 * - `quest_listed` (BEFORE INSERT of a public row or one that names `listed`, and UPDATE of public,
 *   twin_id or listed) computes it for the row from its twin; no statement sets it by hand, as one that
 *   tries gets the computed value. A private insert (a new quest, an embark's copy) calls no function.
 * - `twin_quests_listed` (AFTER UPDATE of public or services on twins, only when the twin's sharing
 *   changes) sets it on the twin's public quests.
 * - The two cannot miss each other. A twin's change holds its row lock (FOR NO KEY UPDATE) until commit;
 *   a quest that becomes public (inserted public, or made public) reads its twin FOR SHARE, which
 *   conflicts with it. Whichever locks the twin second waits for the other to commit, and reads it after:
 *   the quest's trigger then sees the twin's new sharing (READ COMMITTED fetches the newest row version
 *   for a locking read), or the twin's trigger, whose UPDATE takes a new snapshot, sees the quest public.
 *   A quest already public when the twin changes is an existing row the twin's UPDATE waits for and
 *   re-reads. A private quest needs no lock (its `listed` is false whatever its twin), so the service's
 *   inserts (new quests, embarked copies: private) take none, and an embark's lock order is unchanged.
 * - The one new wait: a quest made public waits for a concurrent change of its twin's row. A twin's
 *   deletion at that very moment (it locks the twin, then deletes its quests) deadlocks with it; PostgreSQL
 *   rolls one of them back, answered 503 `transaction_conflict` with Retry-After (nothing stored).
 * - The existing `quests_public_idx` (created, id) WHERE public serves the feed's page and count; the
 *   column adds no index. Each statement names the organization with the twin, so on Citus
 *   (docs/SCALING.md) both triggers stay on their own organization's shard.
 */
export class QuestListing1763940000000 implements MigrationInterface {
  name = 'QuestListing1763940000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE quests ADD COLUMN listed boolean NOT NULL DEFAULT false`);
    await db.query(`CREATE FUNCTION quest_listed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.public THEN
          -- FOR SHARE: waits for a concurrent change of the twin's sharing (see the migration QuestListing).
          NEW.listed := coalesce((SELECT t.public OR cardinality(t.services) > 0 FROM twins t
                                   WHERE t.organization_id = NEW.organization_id AND t.id = NEW.twin_id FOR SHARE), false);
        ELSE
          NEW.listed := false;
        END IF;
        RETURN NEW;
      END $$`);
    await db.query(`CREATE FUNCTION twin_quests_listed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE quests q SET listed = (NEW.public OR cardinality(NEW.services) > 0)
         WHERE q.organization_id = NEW.organization_id AND q.twin_id = NEW.id AND q.public;
        RETURN NULL;
      END $$`);
    // Filled before the triggers exist, so the fill does not run quest_listed (a locking read of the
    // twin) again for every row; writers wait meanwhile, so none is missed.
    await db.query(`LOCK TABLE twins, quests IN SHARE MODE`);
    await db.query(`
      UPDATE quests q SET listed = true
        FROM twins t
       WHERE t.organization_id = q.organization_id AND t.id = q.twin_id AND q.public AND (t.public OR cardinality(t.services) > 0)`);
    await db.query(`CREATE TRIGGER quest_listed BEFORE INSERT ON quests FOR EACH ROW WHEN (NEW.public OR NEW.listed) EXECUTE FUNCTION quest_listed()`);
    await db.query(`CREATE TRIGGER quest_listed_update BEFORE UPDATE OF public, twin_id, listed ON quests FOR EACH ROW
      WHEN (OLD.public IS DISTINCT FROM NEW.public OR OLD.twin_id IS DISTINCT FROM NEW.twin_id OR OLD.listed IS DISTINCT FROM NEW.listed)
      EXECUTE FUNCTION quest_listed()`);
    await db.query(`CREATE TRIGGER twin_quests_listed AFTER UPDATE OF public, services ON twins FOR EACH ROW
      WHEN ((OLD.public OR cardinality(OLD.services) > 0) IS DISTINCT FROM (NEW.public OR cardinality(NEW.services) > 0))
      EXECUTE FUNCTION twin_quests_listed()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER twin_quests_listed ON twins`);
    await db.query(`DROP TRIGGER quest_listed_update ON quests`);
    await db.query(`DROP TRIGGER quest_listed ON quests`);
    await db.query(`DROP FUNCTION twin_quests_listed()`);
    await db.query(`DROP FUNCTION quest_listed()`);
    await db.query(`ALTER TABLE quests DROP COLUMN listed`);
  }
}
