import { defineTable } from './table.js';

/** An uploaded image (docs/API.md, section 11). */
export const images = defineTable(
  'images',
  {
    id: { type: 'uuid', primary: true, generated: 'uuid' },
    organization_id: { type: 'uuid' },
    content_type: { type: 'varchar', length: 64 },
    size: { type: 'integer' },
    width: { type: 'integer' },
    height: { type: 'integer' },
    /** Hex SHA-256 of the bytes; the strong ETag of the content. */
    sha256: { type: 'char', length: 64 },
    /** The content while images live in the database; null when an external store holds it. */
    bytes: { type: 'bytea', nullable: true },
    created: { type: 'timestamptz', default: () => 'now()' },
  },
  {
    indices: [{ name: 'images_organization_idx', columns: ['organization_id', 'created'] }],
    checks: [
      { name: 'images_size_check', expression: '"size" > 0' },
      { name: 'images_width_check', expression: '"width" > 0' },
      { name: 'images_height_check', expression: '"height" > 0' },
    ],
    relations: {
      organization: { type: 'many-to-one', target: 'organizations', onDelete: 'CASCADE', joinColumn: { name: 'organization_id', foreignKeyConstraintName: 'images_organization_id_fkey' } },
    },
  },
);
