import { defineTable } from './table.js';

/**
 * Secrets the service makes for itself and every instance sharing the database must share: today the
 * key that signs page cursors (`cursor`). Created at first use with 32 random bytes, unless the
 * environment provides one (CURSOR_SECRET).
 */
export const serviceKeys = defineTable('service_keys', {
  name: { type: 'text', primary: true },
  secret: { type: 'bytea' },
  created: { type: 'timestamptz', default: () => 'now()' },
});
