import { identifier, type ResourceObject } from '../common/json-api/resource.js';
import type { ImageUrl } from '../images/image-links.js';
import { moneyToJson } from './money.js';
import type { QuestRow, TaskRow } from './quests.repository.js';

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
