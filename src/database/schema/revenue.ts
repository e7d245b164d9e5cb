import { defineTable } from './table.js';

/** One earning: a twin embarked on a quest and the quest's creating twin earned its price. */
export const revenueEntries = defineTable(
  'revenue_entries',
  {
    id: { type: 'uuid', primary: true, generated: 'uuid' },
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
    relations: {
      quest: { type: 'many-to-one', target: 'quests', onDelete: 'CASCADE', joinColumn: { name: 'quest_id', foreignKeyConstraintName: 'revenue_entries_quest_id_fkey' } },
      twin: { type: 'many-to-one', target: 'twins', onDelete: 'CASCADE', joinColumn: { name: 'twin_id', foreignKeyConstraintName: 'revenue_entries_twin_id_fkey' } },
      embarking_twin: { type: 'many-to-one', target: 'twins', onDelete: 'SET NULL', nullable: true, joinColumn: { name: 'embarking_twin_id', foreignKeyConstraintName: 'revenue_entries_embarking_twin_id_fkey' } },
      copy: { type: 'many-to-one', target: 'quests', onDelete: 'SET NULL', nullable: true, joinColumn: { name: 'copy_id', foreignKeyConstraintName: 'revenue_entries_copy_id_fkey' } },
    },
  },
);
