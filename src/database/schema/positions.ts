import { defineTable } from './table.js';

/**
 * Where twins were (migration Positions): one row per twin and `occurred`, in a table partitioned by day
 * of `occurred` (its partitions are made and dropped by src/twins/positions/position-partitions.ts).
 */
export const positions = defineTable(
  'positions',
  {
    organization_id: { type: 'uuid', primary: true, primaryKeyConstraintName: 'positions_pkey' },
    twin_id: { type: 'uuid', primary: true, primaryKeyConstraintName: 'positions_pkey' },
    /** When the device was there, by its own clock. */
    occurred: { type: 'timestamptz', primary: true, primaryKeyConstraintName: 'positions_pkey' },
    location: { type: 'geometry', spatialFeatureType: 'Point', srid: 4326 },
    /** Metres (radius of the device's uncertainty). */
    accuracy: { type: 'float8', nullable: true },
    /** Metres per second. */
    speed: { type: 'float8', nullable: true },
    /** Degrees clockwise from true north, [0, 360). */
    heading: { type: 'float8', nullable: true },
    /** Metres above the WGS 84 ellipsoid. */
    altitude: { type: 'float8', nullable: true },
  },
  {
    foreignKeys: [{ name: 'positions_organization_id_twin_id_fkey', target: 'twins', columnNames: ['organization_id', 'twin_id'], referencedColumnNames: ['organization_id', 'id'], onDelete: 'CASCADE' }],
  },
);
