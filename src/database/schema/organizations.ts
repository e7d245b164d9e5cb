import { defineTable } from './table.js';

export const organizations = defineTable('organizations', {
  id: { type: 'uuid', primary: true, generated: 'uuid' },
  name: { type: 'varchar', length: 255 },
  created: { type: 'timestamptz', default: () => 'now()' },
  modified: { type: 'timestamptz', default: () => 'now()' },
});
