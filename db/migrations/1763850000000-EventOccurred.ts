import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * events.occurred (src/database/schema/events.ts): when the event happened by the device's clock, as the
 * client says (mobile apps record offline and sync later); `timestamp` stays the service's receipt time.
 * Null when the client did not say. Adding a nullable column without a default rewrites no rows.
 */
export class EventOccurred1763850000000 implements MigrationInterface {
  name = 'EventOccurred1763850000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE events ADD COLUMN occurred timestamptz(6)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE events DROP COLUMN occurred`);
  }
}
