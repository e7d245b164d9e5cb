import { defineTable } from './table.js';

/** The twins table (docs/API.md, section 9). */
export const twins = defineTable(
  'twins',
  {
    id: { type: 'uuid', primary: true, generated: 'uuid' },
    organization_id: { type: 'uuid' },
    /** The account that created the twin; null for imported places. */
    owner_account_id: { type: 'uuid', nullable: true },
    name: { type: 'varchar', length: 255 },
    description: { type: 'text', default: '' },
    personal: { type: 'boolean', default: false },
    public: { type: 'boolean', default: false },
    location: { type: 'geometry', spatialFeatureType: 'Point', srid: 4326, nullable: true },
    /** When `location` was reported (its position's `occurred`); null when unknown, older than any position (migration Positions). */
    location_occurred: { type: 'timestamptz', nullable: true },
    // A database-generated uuid (DEFAULT gen_random_uuid()), declared the way TypeORM reads it back.
    personality_id: { type: 'uuid', generated: 'uuid' },
    characteristics: { type: 'text', array: true, default: '{}' },
    services: { type: 'text', array: true, default: '{}' },
    connections: { type: 'uuid', array: true, default: '{}' },
    meta_data: { type: 'jsonb', default: {} },
    place_id: { type: 'varchar', length: 255, nullable: true },
    provider: { type: 'varchar', length: 255, default: '' },
    opening_hours: { type: 'jsonb', default: {} },
    phone_number: { type: 'varchar', length: 64, default: '' },
    address: { type: 'varchar', length: 512, default: '' },
    city: { type: 'varchar', length: 255, default: '' },
    state: { type: 'varchar', length: 255, default: '' },
    website: { type: 'varchar', length: 2048, default: '' },
    provider_info: { type: 'jsonb', default: { photos: [], reviews: [] } },
    tags: { type: 'text', array: true, default: '{}' },
    /** Quest tasks naming this twin as their place, maintained in the same transaction as the tasks. */
    tasks_supplied: { type: 'integer', default: 0 },
    created: { type: 'timestamptz', default: () => 'now()' },
    modified: { type: 'timestamptz', default: () => 'now()' },
  },
  {
    indices: [
      { name: 'twins_organization_idx', columns: ['organization_id', 'created', 'id'] },
      { name: 'twins_created_idx', columns: ['created', 'id'] },
      { name: 'twins_location_gist', columns: ['location'], spatial: true },
      // Partial, GIN and expression indexes of the migrations, which TypeORM cannot describe: declared so
      // the schema check leaves them alone.
      { name: 'twins_public_created_idx', synchronize: false },
      { name: 'twins_supplier_created_idx', synchronize: false },
      { name: 'twins_owner_created_idx', synchronize: false },
      { name: 'twins_characteristics_gin', synchronize: false },
      { name: 'twins_location_geography_gist', synchronize: false },
      // The partial unique index on imported places (organization_id, place_id).
      { name: 'twins_place_unique', synchronize: false },
      // The two halves of the visibility rule in list order (partial; migration TwinCounts).
      { name: 'twins_shared_created_idx', synchronize: false },
      { name: 'twins_unshared_created_idx', synchronize: false },
      // sort=name / sort=modified (migration TwinSortIndexes): the shared half (partial), and by organization.
      { name: 'twins_shared_name_idx', synchronize: false },
      { name: 'twins_shared_modified_idx', synchronize: false },
      { name: 'twins_unshared_name_idx', synchronize: false },
      { name: 'twins_unshared_modified_idx', synchronize: false },
      { name: 'twins_organization_name_idx', columns: ['organization_id', 'name', 'id'] },
      { name: 'twins_organization_modified_idx', columns: ['organization_id', 'modified', 'id'] },
      // A vector tile's twins, one range of Z-order keys, index-only (migration TwinTileKeys).
      { name: 'twins_tile_key_idx', synchronize: false },
    ],
    // What same-organization foreign keys reference (migration CitusReady); the key at a move to Citus.
    uniques: [{ name: 'twins_organization_id_id_key', columns: ['organization_id', 'id'] }],
    relations: {
      organization: { type: 'many-to-one', target: 'organizations', onDelete: 'CASCADE', joinColumn: { name: 'organization_id', foreignKeyConstraintName: 'twins_organization_id_fkey' } },
      owner: { type: 'many-to-one', target: 'accounts', onDelete: 'SET NULL', nullable: true, joinColumn: { name: 'owner_account_id', foreignKeyConstraintName: 'twins_owner_account_id_fkey' } },
    },
  },
);
