import { defineTable } from './table.js';

/**
 * Geofences of an organization (migration Geofences, docs/API.md "Geofences"): a valid Polygon or
 * MultiPolygon in WGS 84. A position crossing one's boundary is an event of the twin's timeline.
 */
export const geofences = defineTable(
  'geofences',
  {
    id: { type: 'uuid', primary: true, generated: 'uuid' },
    organization_id: { type: 'uuid' },
    name: { type: 'varchar', length: 255 },
    description: { type: 'varchar', length: 1024, nullable: true },
    geometry: { type: 'geometry', spatialFeatureType: 'Geometry', srid: 4326 },
    created: { type: 'timestamptz', precision: 6, default: () => 'now()' },
    modified: { type: 'timestamptz', precision: 6, default: () => 'now()' },
  },
  {
    indices: [
      { name: 'geofences_organization_idx', columns: ['organization_id', 'created'] },
      // A GiST index over (organization_id, geometry) (migration GeofencesByOrganization, btree_gist):
      // what a position's candidate geofences are found by (`=` and `&&`).
      { name: 'geofences_organization_geometry_gist', synchronize: false },
    ],
    // What same-organization foreign keys would reference, and the key at a move to Citus (docs/SCALING.md).
    uniques: [{ name: 'geofences_organization_id_id_key', columns: ['organization_id', 'id'] }],
    relations: {
      organization: { type: 'many-to-one', target: 'organizations', onDelete: 'CASCADE', joinColumn: { name: 'organization_id', foreignKeyConstraintName: 'geofences_organization_id_fkey' } },
    },
  },
);

/**
 * A version per organization of its geofences (migration GeofenceSets): moved by a trigger on `geofences`
 * at every change, read by the statements that use an instance's copy of them (geofences/geofence-index.ts).
 */
export const geofenceSets = defineTable(
  'geofence_sets',
  {
    organization_id: { type: 'uuid', primary: true, primaryKeyConstraintName: 'geofence_sets_pkey' },
    version: { type: 'bigint' },
  },
  {
    relations: {
      organization: { type: 'many-to-one', target: 'organizations', onDelete: 'CASCADE', joinColumn: { name: 'organization_id', foreignKeyConstraintName: 'geofence_sets_organization_id_fkey' } },
    },
  },
);
