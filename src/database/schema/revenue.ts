import { defineTable } from './table.js';

/** One earning: a twin embarked on a quest and the quest's creating twin earned its price. */
export const revenueEntries = defineTable(
  'revenue_entries',
  {
    id: { type: 'uuid', primary: true, generated: 'uuid' },
    /** The organization whose revenue it is: the quest's and its creator's (migration CitusReady). */
    organization_id: { type: 'uuid' },
    /** The original quest that was embarked on. */
    quest_id: { type: 'uuid' },
    /** The receiving twin (the quest's creator). */
    twin_id: { type: 'uuid' },
    embarking_twin_id: { type: 'uuid', nullable: true },
    /** The copy the embark created. */
    copy_id: { type: 'uuid', nullable: true },
    amount: { type: 'numeric', precision: 12, scale: 2 },
    created: { type: 'timestamptz', default: () => 'now()' },
  },
  {
    indices: [
      { name: 'revenue_entries_quest_idx', columns: ['quest_id'] },
      { name: 'revenue_entries_twin_idx', columns: ['twin_id'] },
    ],
    checks: [{ name: 'revenue_entries_amount_check', expression: '"amount" >= 0' }],
    // Same-organization foreign keys include the distribution column (migration CitusReady, docs/SCALING.md).
    // The embarking twin and the copy are in the embarker's organization: they keep single-column keys.
    foreignKeys: [
      { name: 'revenue_entries_organization_id_quest_id_fkey', target: 'quests', columnNames: ['organization_id', 'quest_id'], referencedColumnNames: ['organization_id', 'id'], onDelete: 'CASCADE' },
      { name: 'revenue_entries_organization_id_twin_id_fkey', target: 'twins', columnNames: ['organization_id', 'twin_id'], referencedColumnNames: ['organization_id', 'id'], onDelete: 'CASCADE' },
    ],
    relations: {
      embarking_twin: { type: 'many-to-one', target: 'twins', onDelete: 'SET NULL', nullable: true, joinColumn: { name: 'embarking_twin_id', foreignKeyConstraintName: 'revenue_entries_embarking_twin_id_fkey' } },
      copy: { type: 'many-to-one', target: 'quests', onDelete: 'SET NULL', nullable: true, joinColumn: { name: 'copy_id', foreignKeyConstraintName: 'revenue_entries_copy_id_fkey' } },
    },
  },
);
