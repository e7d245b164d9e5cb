import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A BRIN index on events.timestamp for the retention job (src/database/event-retention.ts): events arrive
 * in `timestamp` order (the service's receipt time), so block ranges summarise well, and the oldest rows
 * are found without reading the heap from its first page past the ones already emptied. A few pages for
 * millions of rows, and nearly nothing per insert (the B-tree alternative: another index as large as the
 * primary key on every write).
 */
export class EventTimestampBrin1763880000000 implements MigrationInterface {
  name = 'EventTimestampBrin1763880000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE INDEX events_timestamp_brin ON events USING brin ("timestamp")`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX events_timestamp_brin`);
  }
}
