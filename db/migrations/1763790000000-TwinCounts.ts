import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Twin lists without filters at a million twins (issue 6): their count and their deep pages must not
 * scan what they do not return.
 *
 * - `twin_counts`: per organization, how many twins it has (`total`) and how many of them are visible
 *   to every organization (`shared`: public or supplier). Kept by statement-level triggers on twins in
 *   the writing transaction, so a count read from it is exactly what a `count(*)` in the same snapshot
 *   would say (never a stale cache). The visible count of organization X is
 *   `sum(shared) + (total - shared of X)`; the own count is `total of X`. Only statements that change
 *   twins of an organization lock its row (in organization order: no deadlocks between writers).
 * - Two partial indexes split the visibility rule into its disjoint halves — shared twins in list order,
 *   and each organization's other twins in list order — so a page is a merge of two index-only scans
 *   that reads offset + size index entries and only the returned rows from the table.
 */
export class TwinCounts1763790000000 implements MigrationInterface {
  name = 'TwinCounts1763790000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE twin_counts (
        organization_id  uuid PRIMARY KEY,
        total            bigint NOT NULL DEFAULT 0,
        shared           bigint NOT NULL DEFAULT 0
      )`);
    // One function per statement kind, each reading the transition tables its trigger declares.
    await db.query(`CREATE FUNCTION twin_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO twin_counts AS t (organization_id, total, shared)
        SELECT organization_id, count(*), count(*) FILTER (WHERE public OR cardinality(services) > 0)
          FROM new_rows GROUP BY organization_id ORDER BY organization_id
        ON CONFLICT (organization_id) DO UPDATE SET total = t.total + EXCLUDED.total, shared = t.shared + EXCLUDED.shared;
        RETURN NULL;
      END $$`);
    await db.query(`CREATE FUNCTION twin_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO twin_counts AS t (organization_id, total, shared)
        SELECT organization_id, -count(*), -count(*) FILTER (WHERE public OR cardinality(services) > 0)
          FROM old_rows GROUP BY organization_id ORDER BY organization_id
        ON CONFLICT (organization_id) DO UPDATE SET total = t.total + EXCLUDED.total, shared = t.shared + EXCLUDED.shared;
        RETURN NULL;
      END $$`);
    await db.query(`CREATE FUNCTION twin_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO twin_counts AS t (organization_id, total, shared)
        SELECT organization_id, sum(n), coalesce(sum(n) FILTER (WHERE shared), 0)
          FROM (SELECT organization_id, 1 AS n, (public OR cardinality(services) > 0) AS shared FROM new_rows
                UNION ALL
                SELECT organization_id, -1, (public OR cardinality(services) > 0) FROM old_rows) c
         GROUP BY organization_id
        HAVING sum(n) <> 0 OR coalesce(sum(n) FILTER (WHERE shared), 0) <> 0
         ORDER BY organization_id
        ON CONFLICT (organization_id) DO UPDATE SET total = t.total + EXCLUDED.total, shared = t.shared + EXCLUDED.shared;
        RETURN NULL;
      END $$`);
    await db.query(`CREATE FUNCTION twin_counts_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM twin_counts;
        RETURN NULL;
      END $$`);
    await db.query(`CREATE TRIGGER twin_counts_insert AFTER INSERT ON twins REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION twin_counts_insert()`);
    await db.query(`CREATE TRIGGER twin_counts_delete AFTER DELETE ON twins REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION twin_counts_delete()`);
    await db.query(
      `CREATE TRIGGER twin_counts_update AFTER UPDATE ON twins REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION twin_counts_update()`,
    );
    await db.query(`CREATE TRIGGER twin_counts_truncate AFTER TRUNCATE ON twins FOR EACH STATEMENT EXECUTE FUNCTION twin_counts_truncate()`);
    // Lock out writers while the counts are first taken, so none is missed or counted twice.
    await db.query(`LOCK TABLE twins IN SHARE MODE`);
    await db.query(`
      INSERT INTO twin_counts (organization_id, total, shared)
      SELECT organization_id, count(*), count(*) FILTER (WHERE public OR cardinality(services) > 0) FROM twins GROUP BY organization_id`);

    await db.query(`CREATE INDEX twins_shared_created_idx ON twins (created, id) WHERE (public OR cardinality(services) > 0)`);
    await db.query(`CREATE INDEX twins_unshared_created_idx ON twins (organization_id, created, id) WHERE NOT (public OR cardinality(services) > 0)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX twins_unshared_created_idx`);
    await db.query(`DROP INDEX twins_shared_created_idx`);
    await db.query(`DROP TRIGGER twin_counts_truncate ON twins`);
    await db.query(`DROP TRIGGER twin_counts_update ON twins`);
    await db.query(`DROP TRIGGER twin_counts_delete ON twins`);
    await db.query(`DROP TRIGGER twin_counts_insert ON twins`);
    await db.query(`DROP FUNCTION twin_counts_truncate()`);
    await db.query(`DROP FUNCTION twin_counts_update()`);
    await db.query(`DROP FUNCTION twin_counts_delete()`);
    await db.query(`DROP FUNCTION twin_counts_insert()`);
    await db.query(`DROP TABLE twin_counts`);
  }
}
