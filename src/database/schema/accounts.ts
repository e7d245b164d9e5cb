import { defineTable } from './table.js';

export const accounts = defineTable('accounts', {
  id: { type: 'uuid', primary: true, generated: 'uuid' },
  name: { type: 'varchar', length: 255 },
  created: { type: 'timestamptz', default: () => 'now()' },
  modified: { type: 'timestamptz', default: () => 'now()' },
});

/** An account's membership of an organization: what `X-Organization` is checked against. */
export const memberships = defineTable(
  'memberships',
  {
    account_id: { type: 'uuid', primary: true },
    organization_id: { type: 'uuid', primary: true },
    created: { type: 'timestamptz', default: () => 'now()' },
  },
  {
    indices: [{ name: 'memberships_organization_idx', columns: ['organization_id'] }],
    relations: {
      account: { type: 'many-to-one', target: 'accounts', onDelete: 'CASCADE', joinColumn: { name: 'account_id', foreignKeyConstraintName: 'memberships_account_id_fkey' } },
      organization: { type: 'many-to-one', target: 'organizations', onDelete: 'CASCADE', joinColumn: { name: 'organization_id', foreignKeyConstraintName: 'memberships_organization_id_fkey' } },
    },
  },
);

export const accessTokens = defineTable(
  'access_tokens',
  {
    id: { type: 'uuid', primary: true, generated: 'uuid' },
    account_id: { type: 'uuid' },
    /** SHA-256 of the token; the plaintext is shown once and never stored. */
    token_hash: { type: 'bytea' },
    created: { type: 'timestamptz', default: () => 'now()' },
    expires: { type: 'timestamptz', nullable: true },
    revoked: { type: 'timestamptz', nullable: true },
  },
  {
    uniques: [{ name: 'access_tokens_hash_unique', columns: ['token_hash'] }],
    indices: [{ name: 'access_tokens_account_idx', columns: ['account_id'] }],
    relations: {
      account: { type: 'many-to-one', target: 'accounts', onDelete: 'CASCADE', joinColumn: { name: 'account_id', foreignKeyConstraintName: 'access_tokens_account_id_fkey' } },
    },
  },
);
