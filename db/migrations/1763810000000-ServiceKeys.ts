import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * service_keys (src/database/schema/service-keys.ts): secrets shared by every instance of the service,
 * such as the key signing page cursors. Rows are made at first use, not here, so that a database copied
 * from a migrated template (the embedded database) does not share its keys with every other copy.
 */
export class ServiceKeys1763810000000 implements MigrationInterface {
  name = 'ServiceKeys1763810000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE TABLE service_keys (
      name text PRIMARY KEY,
      secret bytea NOT NULL,
      created timestamptz NOT NULL DEFAULT now()
    )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE service_keys`);
  }
}
