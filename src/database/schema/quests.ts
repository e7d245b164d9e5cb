import { defineTable } from './table.js';

/** A quest or a copy of one made by embarking (docs/API.md, section 12). */
export const quests = defineTable(
  'quests',
  {
    id: { type: 'uuid', primary: true, generated: 'uuid' },
    organization_id: { type: 'uuid' },
    /** The creating twin; for a copy, the twin that embarked. */
    twin_id: { type: 'uuid' },
    name: { type: 'varchar', length: 255 },
    summary: { type: 'text', default: '' },
    description: { type: 'text', default: '' },
    summary_image_id: { type: 'uuid', nullable: true },
    public: { type: 'boolean', default: false },
    /** Public, and its twin is shared (public or a supplier): in every organization's feed. Kept by triggers (migration QuestListing), never written by the service. */
    listed: { type: 'boolean', default: false },
    original_id: { type: 'uuid', nullable: true },
    /** Exact decimal; pg hands it over as a string (common/money.ts). */
    price: { type: 'numeric', precision: 12, scale: 2, default: 0 },
    created: { type: 'timestamptz', default: () => 'now()' },
    modified: { type: 'timestamptz', default: () => 'now()' },
  },
  {
    indices: [
      { name: 'quests_embark_unique', columns: ['original_id', 'twin_id'], unique: true, where: 'original_id IS NOT NULL' },
      { name: 'quests_twin_idx', columns: ['twin_id', 'created', 'id'] },
      { name: 'quests_public_idx', columns: ['created', 'id'], where: 'public' },
      { name: 'quests_summary_image_idx', columns: ['summary_image_id'], where: 'summary_image_id IS NOT NULL' },
    ],
    checks: [
      { name: 'quests_price_non_negative', expression: '"price" >= 0' },
      { name: 'quests_name_not_empty', expression: 'length("name") > 0' },
    ],
    // What same-organization foreign keys reference (migration CitusReady); it also serves lookups by organization_id alone.
    uniques: [{ name: 'quests_organization_id_id_key', columns: ['organization_id', 'id'] }],
    // Same-organization foreign keys include the distribution column (migration CitusReady, docs/SCALING.md).
    foreignKeys: [{ name: 'quests_organization_id_twin_id_fkey', target: 'twins', columnNames: ['organization_id', 'twin_id'], referencedColumnNames: ['organization_id', 'id'], onDelete: 'CASCADE' }],
    relations: {
      summary_image: { type: 'many-to-one', target: 'images', onDelete: 'SET NULL', nullable: true, joinColumn: { name: 'summary_image_id', foreignKeyConstraintName: 'quests_summary_image_id_fkey' } },
      original: { type: 'many-to-one', target: 'quests', onDelete: 'SET NULL', nullable: true, joinColumn: { name: 'original_id', foreignKeyConstraintName: 'quests_original_id_fkey' } },
    },
  },
);

/** One task of a quest, optionally at a place (a twin). */
export const questTasks = defineTable(
  'quest_tasks',
  {
    id: { type: 'uuid', primary: true, generated: 'uuid' },
    /** The quest's organization (migration CitusReady). */
    organization_id: { type: 'uuid' },
    quest_id: { type: 'uuid' },
    name: { type: 'varchar', length: 255 },
    description: { type: 'text', default: '' },
    position: { type: 'integer', default: 0 },
    place_twin_id: { type: 'uuid', nullable: true },
    created: { type: 'timestamptz', default: () => 'now()' },
    modified: { type: 'timestamptz', default: () => 'now()' },
  },
  {
    indices: [
      { name: 'quest_tasks_quest_idx', columns: ['quest_id', 'position', 'created', 'id'] },
      { name: 'quest_tasks_place_idx', columns: ['place_twin_id'], where: 'place_twin_id IS NOT NULL' },
    ],
    checks: [{ name: 'quest_tasks_position_check', expression: '"position" >= 0' }],
    // Same-organization foreign keys include the distribution column (migration CitusReady, docs/SCALING.md).
    foreignKeys: [{ name: 'quest_tasks_organization_id_quest_id_fkey', target: 'quests', columnNames: ['organization_id', 'quest_id'], referencedColumnNames: ['organization_id', 'id'], onDelete: 'CASCADE' }],
    relations: {
      place: { type: 'many-to-one', target: 'twins', onDelete: 'SET NULL', nullable: true, joinColumn: { name: 'place_twin_id', foreignKeyConstraintName: 'quest_tasks_place_twin_id_fkey' } },
    },
  },
);
