import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Geofences (docs/API.md, "Geofences"): places of an organization, polygons in WGS 84. A twin's position
 * that enters or leaves one is an event of its timeline (`geofence.entered`, `geofence.exited`), recorded
 * by the statement that stores the position (src/geofences/geofence-crossings.ts).
 *
 * - `geometry`: a valid Polygon or MultiPolygon, checked by the service before it is stored (no CHECK on its
 *   type: PostGIS would read one as the column's type, which TypeORM then compares with the declaration).
 * - `geofences_geometry_gist`: a position finds its candidate geofences by `&&` on this index, then
 *   `ST_Covers` decides (the boundary is inside, a hole outside).
 * - `UNIQUE (organization_id, id)`, `organization_id` leading every key, as docs/SCALING.md's Citus plan
 *   wants; an organization's deletion takes its geofences with it.
 */
export class Geofences1763970000000 implements MigrationInterface {
  name = 'Geofences1763970000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE geofences (
        id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id  uuid NOT NULL,
        name             varchar(255) NOT NULL,
        description      varchar(1024),
        geometry         geometry(Geometry, 4326) NOT NULL,
        created          timestamptz(6) NOT NULL DEFAULT now(),
        modified         timestamptz(6) NOT NULL DEFAULT now(),
        CONSTRAINT geofences_organization_id_id_key UNIQUE (organization_id, id),
        CONSTRAINT geofences_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations (id) ON DELETE CASCADE
      )`);
    await db.query(`CREATE INDEX geofences_organization_idx ON geofences (organization_id, created)`);
    await db.query(`CREATE INDEX geofences_geometry_gist ON geofences USING gist (geometry)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE geofences`);
  }
}
