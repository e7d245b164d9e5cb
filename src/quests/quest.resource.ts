import { identifier, type ResourceObject } from '../common/json-api/resource.js';
import { memberNames, resourceJsonSql, type ResourceSql } from '../common/json-api/resource-sql.js';
import { imageContentUrlSql, type ImageUrl } from '../images/image-links.js';
import { isoTimestampSql } from '../database/timestamps.js';
import { moneyToJson } from '../common/money.js';
import type { questTasks, quests, Row } from '../database/schema/index.js';

/**
 * A quest in its full form (docs/API.md, section 12): the quest, its creating twin, its original's twin, its
 * task count. Not `listed`: the feed's own bookkeeping, not shown.
 */
export interface QuestRow extends Omit<Row<typeof quests>, 'listed'> {
  twin_name: string;
  twin_description: string;
  original_twin_id: string | null;
  original_twin_name: string | null;
  original_twin_description: string | null;
  task_count: number;
  /** The version its ETag names (read where the answer carries an ETag). */
  version?: string;
}

/** A task of a quest as the repository reads it and the API shows it: its organization is its quest's, never an attribute of its own. */
export type TaskRow = Omit<Row<typeof questTasks>, 'organization_id'>;

/** `images`: the images the quest uses (today: its summary image), with their count. */
function imagesRelationship(row: QuestRow) {
  const data = row.summary_image_id ? [{ type: 'images', id: row.summary_image_id }] : [];
  return { data, meta: { count: data.length } };
}

/**
 * The creation answer, exactly the shape mobile apps expect (docs/API.md, section 12): `created`, `modified`, `name`,
 * `description`, `summary`, `public`, and the `images` and `summary-image` relationships.
 */
export function createdQuestResource(row: QuestRow): ResourceObject {
  return {
    type: 'quests',
    id: row.id,
    attributes: {
      created: row.created,
      modified: row.modified,
      name: row.name,
      description: row.description,
      summary: row.summary,
      public: row.public,
    },
    relationships: {
      images: imagesRelationship(row),
      'summary-image': { data: identifier('images', row.summary_image_id) },
    },
  };
}

/** The full form (docs/API.md, section 12) (lists, detail, PATCH and embark answers), plus `price`. */
export function questResource(row: QuestRow, imageUrl: ImageUrl): ResourceObject {
  return {
    type: 'quests',
    id: row.id,
    attributes: {
      created: row.created,
      modified: row.modified,
      name: row.name,
      summary: row.summary,
      description: row.description,
      'summary-image-url': row.summary_image_id ? imageUrl(row.summary_image_id) : null,
      public: row.public,
      price: moneyToJson(row.price),
      'twin-metadata': { id: row.twin_id, name: row.twin_name, description: row.twin_description },
      'original-twin-metadata': row.original_twin_id
        ? { id: row.original_twin_id, name: row.original_twin_name, description: row.original_twin_description }
        : null,
      'task-count': row.task_count,
    },
    relationships: {
      images: imagesRelationship(row),
      'summary-image': { data: identifier('images', row.summary_image_id) },
      twin: { data: { type: 'twins', id: row.twin_id } },
      original: { data: identifier('quests', row.original_id) },
    },
  };
}

/**
 * questResource as SQL: the quests row `q` joined as QUEST_JOINS joins it (`t` its twin, `o` its
 * original, `ot` the original's twin), `imagesBase` the SQL of the absolute URL of `/images/`.
 * test/e2e/resource-json.e2e-spec.ts proves it equal to questResource.
 */
const questSql = (imagesBase: string, taskCount = '(SELECT count(*) FROM quest_tasks k WHERE k.quest_id = q.id)'): ResourceSql => ({
  type: 'quests',
  id: 'q.id',
  attributes: {
    created: isoTimestampSql('q.created'),
    modified: isoTimestampSql('q.modified'),
    name: 'q.name',
    summary: 'q.summary',
    description: 'q.description',
    'summary-image-url': imageContentUrlSql(imagesBase, 'q.summary_image_id'),
    public: 'q.public',
    price: 'coalesce(q.price, 0)',
    'twin-metadata': `json_build_object('id', q.twin_id, 'name', t.name, 'description', t.description)`,
    'original-twin-metadata': `CASE WHEN o.twin_id IS NOT NULL THEN json_build_object('id', o.twin_id, 'name', ot.name, 'description', ot.description) END`,
    'task-count': taskCount,
  },
  relationships: {
    images: `json_build_object('data', CASE WHEN q.summary_image_id IS NULL THEN '[]'::json ELSE json_build_array(json_build_object('type', 'images', 'id', q.summary_image_id)) END,
                               'meta', json_build_object('count', CASE WHEN q.summary_image_id IS NULL THEN 0 ELSE 1 END))`,
    'summary-image': `json_build_object('data', CASE WHEN q.summary_image_id IS NOT NULL THEN json_build_object('type', 'images', 'id', q.summary_image_id) END)`,
    twin: `json_build_object('data', json_build_object('type', 'twins', 'id', q.twin_id))`,
    original: `json_build_object('data', CASE WHEN q.original_id IS NOT NULL THEN json_build_object('type', 'quests', 'id', q.original_id) END)`,
  },
});

/** How the full form's SQL joins the quest `q` to what it shows. */
export const QUEST_JOINS = `JOIN twins t ON t.id = q.twin_id
    LEFT JOIN quests o ON o.id = q.original_id
    LEFT JOIN twins ot ON ot.id = o.twin_id`;

export const questJsonSql = (imagesBase: string, fieldset?: ReadonlySet<string>): string => resourceJsonSql(questSql(imagesBase), fieldset);

/**
 * The full form of a quest made in the same statement (an embark's copy), whose tasks that statement's
 * own snapshot cannot count: `taskCount` is the SQL that can (the count of the tasks CTE).
 */
export const newQuestJsonSql = (imagesBase: string, taskCount: string): string => resourceJsonSql(questSql(imagesBase, taskCount));

/** What `fields[quests]` may name (the full form). */
export const QUEST_FIELDS = memberNames(questSql("''"));

/** taskResource as SQL of the quest_tasks row aliased `k`. */
const taskSql = (k: string): ResourceSql => ({
  type: 'tasks',
  id: `${k}.id`,
  attributes: {
    name: `${k}.name`,
    description: `${k}.description`,
    position: `${k}.position`,
    created: isoTimestampSql(`${k}.created`),
    modified: isoTimestampSql(`${k}.modified`),
  },
  relationships: {
    quest: `json_build_object('data', json_build_object('type', 'quests', 'id', ${k}.quest_id))`,
    place: `json_build_object('data', CASE WHEN ${k}.place_twin_id IS NOT NULL THEN json_build_object('type', 'twins', 'id', ${k}.place_twin_id) END)`,
  },
});

export const taskJsonSql = (k: string, fieldset?: ReadonlySet<string>): string => resourceJsonSql(taskSql(k), fieldset);

/** What `fields[tasks]` may name. */
export const TASK_FIELDS = memberNames(taskSql('k'));

export function taskResource(row: TaskRow): ResourceObject {
  return {
    type: 'tasks',
    id: row.id,
    attributes: {
      name: row.name,
      description: row.description,
      position: row.position,
      created: row.created,
      modified: row.modified,
    },
    relationships: {
      quest: { data: { type: 'quests', id: row.quest_id } },
      place: { data: identifier('twins', row.place_twin_id) },
    },
  };
}
