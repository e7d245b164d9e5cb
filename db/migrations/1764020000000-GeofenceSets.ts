import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `geofence_sets`: a version per organization, moved by every statement that adds, changes or removes one
 * of its geofences (a row trigger, in that statement's transaction). An instance may keep an
 * organization's geofences in memory to find a batch's crossings (src/geofences/geofence-index.ts); the
 * statement that records the batch uses what the instance found only when the version it read in its own
 * snapshot is the one the instance loaded, so it sees exactly the geofences PostgreSQL would have searched.
 * An organization that never had a geofence has no row.
 */
export class GeofenceSets1764020000000 implements MigrationInterface {
  name = 'GeofenceSets1764020000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE TABLE geofence_sets (
      organization_id uuid NOT NULL,
      version bigint NOT NULL,
      CONSTRAINT geofence_sets_pkey PRIMARY KEY (organization_id),
      CONSTRAINT geofence_sets_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations (id) ON DELETE CASCADE)`);
    // A changed or removed geofence's organization has its row already (made by its first geofence, or
    // below): an update, never an insert, so deleting an organization (its geofences by cascade) works.
    await db.query(`CREATE FUNCTION geofence_set_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' THEN
          UPDATE geofence_sets SET version = version + 1 WHERE organization_id = OLD.organization_id;
        END IF;
        IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.organization_id <> OLD.organization_id) THEN
          INSERT INTO geofence_sets AS s (organization_id, version) VALUES (NEW.organization_id, 1)
          ON CONFLICT (organization_id) DO UPDATE SET version = s.version + 1;
        END IF;
        RETURN NULL;
      END $$`);
    await db.query(`CREATE TRIGGER geofences_set_changed AFTER INSERT OR UPDATE OR DELETE ON geofences FOR EACH ROW EXECUTE FUNCTION geofence_set_changed()`);
    await db.query(`INSERT INTO geofence_sets (organization_id, version) SELECT DISTINCT organization_id, 1 FROM geofences`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER geofences_set_changed ON geofences`);
    await db.query(`DROP FUNCTION geofence_set_changed()`);
    await db.query(`DROP TABLE geofence_sets`);
  }
}
