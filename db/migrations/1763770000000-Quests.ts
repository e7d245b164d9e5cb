import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Quests, their tasks, uploaded images and the revenue ledger (docs/API.md, sections 11–13).
 *
 * - A copy made by embarking points at its original (`original_id`); the partial unique index
 *   `quests_embark_unique` is what makes a twin embark at most once on a quest, even when two
 *   requests race (the loser gets SQLSTATE 23505 and a 409).
 * - Money is `numeric`: exact decimals, summed in SQL.
 * - `images.bytes` holds the content while images are stored in the database (DatabaseImageStore);
 *   it is nullable so that an object-store implementation can keep only the metadata here.
 */
export class Quests1763770000000 implements MigrationInterface {
  name = 'Quests1763770000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE images (
        id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        content_type     varchar(64) NOT NULL,
        size             integer NOT NULL CHECK (size > 0),
        width            integer NOT NULL CHECK (width > 0),
        height           integer NOT NULL CHECK (height > 0),
        sha256           char(64) NOT NULL,
        bytes            bytea,
        created          timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX images_organization_idx ON images (organization_id, created)`);

    await db.query(`
      CREATE TABLE quests (
        id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id   uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        twin_id           uuid NOT NULL REFERENCES twins (id) ON DELETE CASCADE,
        name              varchar(255) NOT NULL,
        summary           text NOT NULL DEFAULT '',
        description       text NOT NULL DEFAULT '',
        summary_image_id  uuid REFERENCES images (id) ON DELETE SET NULL,
        public            boolean NOT NULL DEFAULT false,
        original_id       uuid REFERENCES quests (id) ON DELETE SET NULL,
        price             numeric(12, 2) NOT NULL DEFAULT 0,
        created           timestamptz NOT NULL DEFAULT now(),
        modified          timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT quests_price_non_negative CHECK (price >= 0),
        CONSTRAINT quests_name_not_empty CHECK (length(name) > 0)
      )`);
    // A twin takes part in a quest at most once.
    await db.query(`CREATE UNIQUE INDEX quests_embark_unique ON quests (original_id, twin_id) WHERE original_id IS NOT NULL`);
    // GET /my/quests/ (the acting twin's quests, newest first).
    await db.query(`CREATE INDEX quests_twin_idx ON quests (twin_id, created, id)`);
    // GET /quests/ (the discovery feed: public quests, newest first).
    await db.query(`CREATE INDEX quests_public_idx ON quests (created, id) WHERE public`);
    await db.query(`CREATE INDEX quests_organization_idx ON quests (organization_id)`);
    // Image visibility ("used by a public quest") and ON DELETE SET NULL.
    await db.query(`CREATE INDEX quests_summary_image_idx ON quests (summary_image_id) WHERE summary_image_id IS NOT NULL`);

    await db.query(`
      CREATE TABLE quest_tasks (
        id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        quest_id       uuid NOT NULL REFERENCES quests (id) ON DELETE CASCADE,
        name           varchar(255) NOT NULL,
        description    text NOT NULL DEFAULT '',
        position       integer NOT NULL DEFAULT 0 CHECK (position >= 0),
        place_twin_id  uuid REFERENCES twins (id) ON DELETE SET NULL,
        created        timestamptz NOT NULL DEFAULT now(),
        modified       timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX quest_tasks_quest_idx ON quest_tasks (quest_id, position, created, id)`);
    await db.query(`CREATE INDEX quest_tasks_place_idx ON quest_tasks (place_twin_id) WHERE place_twin_id IS NOT NULL`);

    await db.query(`
      CREATE TABLE revenue_entries (
        id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        quest_id           uuid NOT NULL REFERENCES quests (id) ON DELETE CASCADE,
        twin_id            uuid NOT NULL REFERENCES twins (id) ON DELETE CASCADE,
        embarking_twin_id  uuid REFERENCES twins (id) ON DELETE SET NULL,
        copy_id            uuid REFERENCES quests (id) ON DELETE SET NULL,
        amount             numeric(12, 2) NOT NULL CHECK (amount >= 0),
        created            timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX revenue_entries_quest_idx ON revenue_entries (quest_id)`);
    await db.query(`CREATE INDEX revenue_entries_twin_idx ON revenue_entries (twin_id)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE revenue_entries`);
    await db.query(`DROP TABLE quest_tasks`);
    await db.query(`DROP TABLE quests`);
    await db.query(`DROP TABLE images`);
  }
}
