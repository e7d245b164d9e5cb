import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Announces every committed change that can make resolved credentials wrong, on the NOTIFY channel
 * `twin_credentials` (src/common/auth/credentials.ts): a token revoked, expired early or deleted; a
 * membership, account or organization changed or deleted; a twin deleted or moved to another
 * organization. Statement-level triggers: one notice per statement (PostgreSQL folds equal notices of
 * a transaction into one), sent when the transaction commits, whoever ran it — the service on any
 * instance, the CLI or plain SQL. Inserts are not announced: the cache only keeps successful
 * resolutions, which an insert cannot make wrong.
 */
export class CredentialChanges1763800000000 implements MigrationInterface {
  name = 'CredentialChanges1763800000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE FUNCTION announce_credential_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('twin_credentials', '');
        RETURN NULL;
      END $$`);
    for (const table of ['access_tokens', 'memberships', 'accounts', 'organizations']) {
      await db.query(`CREATE TRIGGER ${table}_credential_change AFTER UPDATE OR DELETE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION announce_credential_change()`);
      await db.query(`CREATE TRIGGER ${table}_credential_truncate AFTER TRUNCATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION announce_credential_change()`);
    }
    await db.query(`CREATE TRIGGER twins_credential_change AFTER DELETE OR UPDATE OF organization_id ON twins FOR EACH STATEMENT EXECUTE FUNCTION announce_credential_change()`);
    await db.query(`CREATE TRIGGER twins_credential_truncate AFTER TRUNCATE ON twins FOR EACH STATEMENT EXECUTE FUNCTION announce_credential_change()`);
  }

  async down(db: QueryRunner): Promise<void> {
    for (const table of ['access_tokens', 'memberships', 'accounts', 'organizations', 'twins']) {
      await db.query(`DROP TRIGGER ${table}_credential_change ON ${table}`);
      await db.query(`DROP TRIGGER ${table}_credential_truncate ON ${table}`);
    }
    await db.query(`DROP FUNCTION announce_credential_change()`);
  }
}
