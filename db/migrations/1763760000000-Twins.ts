import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes for the twin API (issue 3), sized for a million twins:
 * - list order `created, id` over everything, and over the two visibility branches that are not the
 *   caller's organization (public, supplier) as partial indexes, so `is_public` / `is_supplier` and
 *   their counts read a small index; the caller's organization uses twins_organization_idx (foundation);
 * - `is_personal` (owner account) in list order;
 * - `characteristics @> …` / `&& …` (characteristics, personality filters) through GIN;
 * - distances in metres (`point`+`dist`, `ordering=distance`) through a GiST index on the geography
 *   cast of the location; `in_bbox` uses the foundation's GiST index on the geometry.
 */
export class Twins1763760000000 implements MigrationInterface {
  name = 'Twins1763760000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE INDEX twins_created_idx ON twins (created, id)`);
    await db.query(`CREATE INDEX twins_public_created_idx ON twins (created, id) WHERE public`);
    await db.query(`CREATE INDEX twins_supplier_created_idx ON twins (created, id) WHERE cardinality(services) > 0`);
    await db.query(`CREATE INDEX twins_owner_created_idx ON twins (owner_account_id, created, id) WHERE owner_account_id IS NOT NULL`);
    await db.query(`CREATE INDEX twins_characteristics_gin ON twins USING gin (characteristics)`);
    await db.query(`CREATE INDEX twins_location_geography_gist ON twins USING gist ((location::geography))`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX twins_location_geography_gist`);
    await db.query(`DROP INDEX twins_characteristics_gin`);
    await db.query(`DROP INDEX twins_owner_created_idx`);
    await db.query(`DROP INDEX twins_supplier_created_idx`);
    await db.query(`DROP INDEX twins_public_created_idx`);
    await db.query(`DROP INDEX twins_created_idx`);
  }
}
