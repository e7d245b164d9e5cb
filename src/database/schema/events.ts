import { defineTable } from './table.js';

/** The events table (docs/API.md, section 14). */
export const events = defineTable(
  'events',
  {
    /** UUIDv7 made by the service (events/uuidv7.ts), so ids sort by time; or a UUID the client chose (offline apps). */
    id: { type: 'uuid', primary: true },
    organization_id: { type: 'uuid' },
    twin_id: { type: 'uuid' },
    name: { type: 'varchar', length: 255 },
    category: { type: 'varchar', length: 255 },
    data: { type: 'jsonb', default: {} },
    timestamp: { type: 'timestamptz', precision: 6, default: () => 'now()' },
    modified: { type: 'timestamptz', precision: 6, default: () => 'now()' },
    /** When it happened by the device's clock, as the client said; null when it did not (migration EventOccurred). */
    occurred: { type: 'timestamptz', precision: 6, nullable: true },
  },
  {
    indices: [
      { name: 'events_timeline_idx', columns: ['twin_id', 'timestamp', 'id'] },
      // A BRIN index (migration EventTimestampBrin), which TypeORM cannot declare: the migration owns it.
      { name: 'events_timestamp_brin', synchronize: false },
    ],
    checks: [{ name: 'events_data_object', expression: `jsonb_typeof(data) = 'object'` }],
    // What same-organization foreign keys reference (migration CitusReady); it also serves lookups by organization_id alone.
    uniques: [{ name: 'events_organization_id_id_key', columns: ['organization_id', 'id'] }],
    // Same-organization foreign keys include the distribution column (migration CitusReady, docs/SCALING.md).
    foreignKeys: [{ name: 'events_organization_id_twin_id_fkey', target: 'twins', columnNames: ['organization_id', 'twin_id'], referencedColumnNames: ['organization_id', 'id'], onDelete: 'CASCADE' }],
  },
);

/** Idempotency keys of `POST /events/` and `POST /operations`, scoped to the acting twin (src/common/idempotency). */
export const idempotencyKeys = defineTable(
  'idempotency_keys',
  {
    twin_id: { type: 'uuid', primary: true, primaryKeyConstraintName: 'idempotency_keys_pkey' },
    key: { type: 'varchar', length: 255, primary: true, primaryKeyConstraintName: 'idempotency_keys_pkey' },
    organization_id: { type: 'uuid' },
    request_hash: { type: 'char', length: 64 },
    // No longer written: each route answers a replay with its own status. Dropped by a later migration,
    // once no running instance of an older version reads it.
    response_status: { type: 'smallint', nullable: true },
    response_body: { type: 'jsonb', nullable: true },
    event_id: { type: 'uuid', nullable: true },
    created: { type: 'timestamptz', precision: 6, default: () => 'now()' },
  },
  {
    indices: [{ name: 'idempotency_keys_created_idx', columns: ['created'] }],
    // Same-organization foreign keys include the distribution column (migration CitusReady, docs/SCALING.md).
    foreignKeys: [{ name: 'idempotency_keys_organization_id_twin_id_fkey', target: 'twins', columnNames: ['organization_id', 'twin_id'], referencedColumnNames: ['organization_id', 'id'], onDelete: 'CASCADE' }],
  },
);
