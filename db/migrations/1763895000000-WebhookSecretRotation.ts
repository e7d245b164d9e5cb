import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The secret a rotation replaced, kept sealed until `previous_secret_expires` when the rotation asked
 * for an overlap (`POST /webhooks/<ID>/rotate-secret?previous_secret_expires_in=…`): deliveries carry a
 * signature by each secret meanwhile, so a receiver can switch to the new one without refusing any.
 */
export class WebhookSecretRotation1763895000000 implements MigrationInterface {
  name = 'WebhookSecretRotation1763895000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE webhooks ADD COLUMN previous_secret_sealed bytea, ADD COLUMN previous_secret_expires timestamptz(6)`);
    await db.query(`ALTER TABLE webhooks ADD CONSTRAINT webhooks_previous_secret_check CHECK ((previous_secret_sealed IS NULL) = (previous_secret_expires IS NULL))`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE webhooks DROP CONSTRAINT webhooks_previous_secret_check, DROP COLUMN previous_secret_expires, DROP COLUMN previous_secret_sealed`);
  }
}
