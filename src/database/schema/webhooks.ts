import { defineTable } from './table.js';

/**
 * Webhooks of partners (migration Webhooks, docs/WEBHOOKS.md): a URL of an organization subscribed to
 * change kinds (`changes.kind`). The signing secret is kept encrypted (AES-256-GCM, src/webhooks/secret-box.ts),
 * because signing needs it in clear: a hash would not do.
 */
export const webhooks = defineTable(
  'webhooks',
  {
    id: { type: 'uuid', primary: true, generated: 'uuid' },
    organization_id: { type: 'uuid' },
    url: { type: 'text' },
    /** Change kinds it receives (`event.created`, …). */
    events: { type: 'varchar', length: 32, array: true },
    description: { type: 'varchar', length: 1024, nullable: true },
    enabled: { type: 'boolean', default: true },
    /** iv (12 bytes) ‖ GCM tag (16) ‖ ciphertext of the secret's text, the webhook id as associated data. */
    secret_sealed: { type: 'bytea' },
    /** The secret a rotation replaced, sealed the same way, still signing until `previous_secret_expires` (migration WebhookSecretRotation). */
    previous_secret_sealed: { type: 'bytea', nullable: true },
    previous_secret_expires: { type: 'timestamptz', precision: 6, nullable: true },
    created: { type: 'timestamptz', precision: 6, default: () => 'now()' },
    modified: { type: 'timestamptz', precision: 6, default: () => 'now()' },
  },
  {
    indices: [{ name: 'webhooks_organization_idx', columns: ['organization_id', 'created'] }],
    // What same-organization foreign keys reference (migration CitusReady); the key at a move to Citus.
    uniques: [{ name: 'webhooks_organization_id_id_key', columns: ['organization_id', 'id'] }],
    checks: [{ name: 'webhooks_previous_secret_check', expression: '(previous_secret_sealed IS NULL) = (previous_secret_expires IS NULL)' }],
    relations: {
      organization: { type: 'many-to-one', target: 'organizations', onDelete: 'CASCADE', joinColumn: { name: 'organization_id', foreignKeyConstraintName: 'webhooks_organization_id_fkey' } },
    },
  },
);

/**
 * The outbox: one row per (webhook, change), written by the trigger on `changes` in the change's own
 * transaction. `body` is the exact payload, built once, so every retry signs and sends the same bytes;
 * `id` is the `webhook-id`. While `state` is `pending`, `next_attempt` is when it is due: a worker that
 * claims it pushes it past its lease, so a crashed worker's claim is due again when the lease ends.
 */
export const webhookDeliveries = defineTable(
  'webhook_deliveries',
  {
    id: { type: 'uuid', primary: true, generated: 'uuid' },
    /** The webhook's organization (migration CitusReady). */
    organization_id: { type: 'uuid' },
    webhook_id: { type: 'uuid' },
    position: { type: 'bigint' },
    kind: { type: 'varchar', length: 32 },
    body: { type: 'text' },
    state: { type: 'varchar', length: 16, default: 'pending' },
    attempts: { type: 'integer', default: 0 },
    next_attempt: { type: 'timestamptz', precision: 6, nullable: true, default: () => 'now()' },
    created: { type: 'timestamptz', precision: 6, default: () => 'now()' },
  },
  {
    indices: [
      // A partial index (migration Webhooks), which TypeORM cannot declare: the migration owns it.
      { name: 'webhook_deliveries_due_idx', synchronize: false },
      { name: 'webhook_deliveries_webhook_idx', columns: ['webhook_id'] },
    ],
    checks: [{ name: 'webhook_deliveries_state_check', expression: `"state" IN ('pending', 'delivered', 'failed')` }],
    // Same-organization foreign keys include the distribution column (migration CitusReady, docs/SCALING.md).
    foreignKeys: [{ name: 'webhook_deliveries_organization_id_webhook_id_fkey', target: 'webhooks', columnNames: ['organization_id', 'webhook_id'], referencedColumnNames: ['organization_id', 'id'], onDelete: 'CASCADE' }],
  },
);

/** Every attempt to deliver (`GET /webhooks/<ID>/deliveries/`): what the receiver answered, or why nothing came back. */
export const webhookAttempts = defineTable(
  'webhook_attempts',
  {
    id: { type: 'uuid', primary: true, generated: 'uuid' },
    /** The webhook's organization (migration CitusReady). */
    organization_id: { type: 'uuid' },
    webhook_id: { type: 'uuid' },
    /** The delivery's `webhook-id` (no foreign key: attempts go with their webhook, and a delivery is never deleted alone). */
    delivery_id: { type: 'uuid' },
    kind: { type: 'varchar', length: 32 },
    attempt: { type: 'integer' },
    status_code: { type: 'integer', nullable: true },
    error: { type: 'text', nullable: true },
    duration_ms: { type: 'integer' },
    attempted: { type: 'timestamptz', precision: 6, default: () => 'now()' },
  },
  {
    indices: [{ name: 'webhook_attempts_webhook_idx', columns: ['webhook_id', 'attempted'] }],
    // Same-organization foreign keys include the distribution column (migration CitusReady, docs/SCALING.md).
    foreignKeys: [{ name: 'webhook_attempts_organization_id_webhook_id_fkey', target: 'webhooks', columnNames: ['organization_id', 'webhook_id'], referencedColumnNames: ['organization_id', 'id'], onDelete: 'CASCADE' }],
  },
);
