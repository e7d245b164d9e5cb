import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `sort=name` and `sort=modified` (either way) on the twin lists, read from indexes as `created` is
 * (migration TwinCounts): the two halves of the visibility rule (shared twins by the key; an
 * organization's other twins by organization and key, partial as their `created` index is, so the
 * planner cannot mistake an organization's size), and an organization's own list. Without them, every
 * page of a sorted list sorted all the visible twins (a second and more at a million twins), the first
 * page as slowly as the deepest.
 */
export class TwinSortIndexes1763820000000 implements MigrationInterface {
  name = 'TwinSortIndexes1763820000000';

  async up(db: QueryRunner): Promise<void> {
    for (const column of ['name', 'modified']) {
      await db.query(`CREATE INDEX twins_shared_${column}_idx ON twins (${column}, id) WHERE (public OR cardinality(services) > 0)`);
      await db.query(`CREATE INDEX twins_unshared_${column}_idx ON twins (organization_id, ${column}, id) WHERE NOT (public OR cardinality(services) > 0)`);
      await db.query(`CREATE INDEX twins_organization_${column}_idx ON twins (organization_id, ${column}, id)`);
    }
  }

  async down(db: QueryRunner): Promise<void> {
    for (const column of ['name', 'modified']) {
      await db.query(`DROP INDEX twins_organization_${column}_idx`);
      await db.query(`DROP INDEX twins_unshared_${column}_idx`);
      await db.query(`DROP INDEX twins_shared_${column}_idx`);
    }
  }
}
