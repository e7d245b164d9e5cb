import { identifier, type ResourceObject } from '../common/json-api/resource.js';
import { imageContentUrlSql, type ImageUrl } from '../images/image-links.js';
import { isoTimestampSql } from '../database/timestamps.js';
import { moneyToJson } from '../common/money.js';
import type { questTasks, quests, Row } from '../database/schema/index.js';

/** A quest in its full form (docs/API.md, section 12): the quest, its creating twin, its original's twin, its task count. */
export interface QuestRow extends Row<typeof quests> {
  twin_name: string;
  twin_description: string;
  original_twin_id: string | null;
  original_twin_name: string | null;
  original_twin_description: string | null;
  task_count: number;
}

/** A task of a quest, as the repository reads it. */
export type TaskRow = Row<typeof questTasks>;

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
 * questResource as SQL, for the feed: the JSON resource of the quests row `q` joined as FULL_FROM joins
 * it (`t` its twin, `o` its original, `ot` the original's twin), `imagesBase` the SQL of the absolute
 * URL of `/images/`. test/e2e/resource-json.e2e-spec.ts proves it equal to questResource.
 */
export const questJsonSql = (imagesBase: string) => `json_build_object('type', 'quests', 'id', q.id, 'attributes', json_build_object(
    'created', ${isoTimestampSql('q.created')}, 'modified', ${isoTimestampSql('q.modified')}, 'name', q.name, 'summary', q.summary,
    'description', q.description, 'summary-image-url', ${imageContentUrlSql(imagesBase, 'q.summary_image_id')}, 'public', q.public,
    'price', coalesce(q.price, 0), 'twin-metadata', json_build_object('id', q.twin_id, 'name', t.name, 'description', t.description),
    'original-twin-metadata', CASE WHEN o.twin_id IS NOT NULL THEN json_build_object('id', o.twin_id, 'name', ot.name, 'description', ot.description) END,
    'task-count', (SELECT count(*) FROM quest_tasks k WHERE k.quest_id = q.id)),
  'relationships', json_build_object(
    'images', json_build_object('data', CASE WHEN q.summary_image_id IS NULL THEN '[]'::json ELSE json_build_array(json_build_object('type', 'images', 'id', q.summary_image_id)) END,
                                'meta', json_build_object('count', CASE WHEN q.summary_image_id IS NULL THEN 0 ELSE 1 END)),
    'summary-image', json_build_object('data', CASE WHEN q.summary_image_id IS NOT NULL THEN json_build_object('type', 'images', 'id', q.summary_image_id) END),
    'twin', json_build_object('data', json_build_object('type', 'twins', 'id', q.twin_id)),
    'original', json_build_object('data', CASE WHEN q.original_id IS NOT NULL THEN json_build_object('type', 'quests', 'id', q.original_id) END)))`;

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
