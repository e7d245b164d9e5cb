import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A position's candidate geofences are its own organization's: the GiST index leads with
 * `organization_id` (btree_gist gives uuid a GiST operator class), so a lookup never walks the geofences
 * of other organizations that happen to lie near the point, however many there are.
 */
export class GeofencesByOrganization1763980000000 implements MigrationInterface {
  name = 'GeofencesByOrganization1763980000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE EXTENSION IF NOT EXISTS btree_gist`);
    await db.query(`CREATE INDEX geofences_organization_geometry_gist ON geofences USING gist (organization_id, geometry)`);
    await db.query(`DROP INDEX geofences_geometry_gist`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`CREATE INDEX geofences_geometry_gist ON geofences USING gist (geometry)`);
    await db.query(`DROP INDEX geofences_organization_geometry_gist`);
  }
}
