import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Extensions, tenancy (organizations, accounts, memberships, access tokens) and the twins table that
 * every tenant-scoped resource hangs off.
 */
export class Foundation1763750000000 implements MigrationInterface {
  name = 'Foundation1763750000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE EXTENSION IF NOT EXISTS postgis`);

    await db.query(`
      CREATE TABLE organizations (
        id        uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name      varchar(255) NOT NULL,
        created   timestamptz NOT NULL DEFAULT now(),
        modified  timestamptz NOT NULL DEFAULT now()
      )`);

    await db.query(`
      CREATE TABLE accounts (
        id        uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name      varchar(255) NOT NULL,
        created   timestamptz NOT NULL DEFAULT now(),
        modified  timestamptz NOT NULL DEFAULT now()
      )`);

    await db.query(`
      CREATE TABLE memberships (
        account_id       uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        organization_id  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        created          timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (account_id, organization_id)
      )`);
    await db.query(`CREATE INDEX memberships_organization_idx ON memberships (organization_id)`);

    // Only the SHA-256 of a token is stored: a leaked table does not leak working credentials.
    await db.query(`
      CREATE TABLE access_tokens (
        id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        account_id  uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        token_hash  bytea NOT NULL,
        created     timestamptz NOT NULL DEFAULT now(),
        expires     timestamptz,
        revoked     timestamptz,
        CONSTRAINT access_tokens_hash_unique UNIQUE (token_hash)
      )`);
    await db.query(`CREATE INDEX access_tokens_account_idx ON access_tokens (account_id)`);

    await db.query(`
      CREATE TABLE twins (
        id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id   uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        owner_account_id  uuid REFERENCES accounts (id) ON DELETE SET NULL,
        name              varchar(255) NOT NULL,
        description       text NOT NULL DEFAULT '',
        personal          boolean NOT NULL DEFAULT false,
        public            boolean NOT NULL DEFAULT false,
        location          geometry(Point, 4326),
        personality_id    uuid NOT NULL DEFAULT gen_random_uuid(),
        characteristics   text[] NOT NULL DEFAULT '{}',
        services          text[] NOT NULL DEFAULT '{}',
        connections       uuid[] NOT NULL DEFAULT '{}',
        meta_data         jsonb NOT NULL DEFAULT '{}',
        place_id          varchar(255),
        provider          varchar(255) NOT NULL DEFAULT '',
        opening_hours     jsonb NOT NULL DEFAULT '{}',
        phone_number      varchar(64) NOT NULL DEFAULT '',
        address           varchar(512) NOT NULL DEFAULT '',
        city              varchar(255) NOT NULL DEFAULT '',
        state             varchar(255) NOT NULL DEFAULT '',
        website           varchar(2048) NOT NULL DEFAULT '',
        provider_info     jsonb NOT NULL DEFAULT '{"photos": [], "reviews": []}',
        tags              text[] NOT NULL DEFAULT '{}',
        -- Quest tasks naming this twin as their place; kept by the quests module in the task's transaction.
        tasks_supplied    integer NOT NULL DEFAULT 0,
        created           timestamptz NOT NULL DEFAULT now(),
        modified          timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX twins_organization_idx ON twins (organization_id, created, id)`);
    await db.query(`CREATE INDEX twins_location_gist ON twins USING gist (location)`);
    await db.query(`CREATE UNIQUE INDEX twins_place_unique ON twins (organization_id, place_id) WHERE place_id IS NOT NULL`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE twins`);
    await db.query(`DROP TABLE access_tokens`);
    await db.query(`DROP TABLE memberships`);
    await db.query(`DROP TABLE accounts`);
    await db.query(`DROP TABLE organizations`);
  }
}
