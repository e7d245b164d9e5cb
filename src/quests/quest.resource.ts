import type { ResourceObject } from '../common/json-api/resource.js';
import { ResourceForm, timestamp, toOne, toOneOrNull, type Member } from '../common/json-api/resource-sql.js';
import { imageContentUrlSql, type ImageUrl } from '../images/image-links.js';
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

/** Members the forms below share (each lists them in its own order). */
const created = timestamp('created');
const modified = timestamp('modified');
/** `images`: the images the quest uses (today: its summary image), with their count. */
const images: Member<QuestRow> = {
  sql: (q) => `json_build_object('data', CASE WHEN ${q}.summary_image_id IS NULL THEN '[]'::json ELSE json_build_array(json_build_object('type', 'images', 'id', ${q}.summary_image_id)) END,
                               'meta', json_build_object('count', CASE WHEN ${q}.summary_image_id IS NULL THEN 0 ELSE 1 END))`,
  value: (row) => {
    const data = row.summary_image_id ? [{ type: 'images', id: row.summary_image_id }] : [];
    return { data, meta: { count: data.length } };
  },
};
const summaryImage = toOneOrNull('images', 'summary_image_id');

/**
 * The creation answer, exactly the shape mobile apps expect (docs/API.md, section 12): `created`, `modified`, `name`,
 * `description`, `summary`, `public`, and the `images` and `summary-image` relationships. Only ever mapped in Node.
 */
const CREATED_QUEST = new ResourceForm<QuestRow>({
  type: 'quests',
  attributes: { created, modified, name: 'name', description: 'description', summary: 'summary', public: 'public' },
  relationships: { images, 'summary-image': summaryImage },
});

export const createdQuestResource = (row: QuestRow): ResourceObject => CREATED_QUEST.resource(row);

/** What the full form's SQL needs beyond the row: the SQL of the absolute URL of `/images/`, and of the quest's task count. */
interface QuestSqlInputs {
  imagesBase: string;
  taskCount: string;
}

/**
 * The full form (docs/API.md, section 12) (lists, detail, PATCH and embark answers), plus `price`. Its SQL
 * reads the quests row `q` joined as QUEST_JOINS joins it (`t` its twin, `o` its original, `ot` the
 * original's twin); Node reads those as the QuestRow columns.
 */
const QUEST = new ResourceForm<QuestRow, QuestSqlInputs, ImageUrl>({
  type: 'quests',
  attributes: {
    created,
    modified,
    name: 'name',
    summary: 'summary',
    description: 'description',
    'summary-image-url': {
      sql: (q, { imagesBase }) => imageContentUrlSql(imagesBase, `${q}.summary_image_id`),
      value: (row, imageUrl) => (row.summary_image_id ? imageUrl(row.summary_image_id) : null),
    },
    public: 'public',
    price: { sql: (q) => `coalesce(${q}.price, 0)`, value: (row) => moneyToJson(row.price) },
    'twin-metadata': {
      sql: (q) => `json_build_object('id', ${q}.twin_id, 'name', t.name, 'description', t.description)`,
      value: (row) => ({ id: row.twin_id, name: row.twin_name, description: row.twin_description }),
    },
    'original-twin-metadata': {
      sql: () => `CASE WHEN o.twin_id IS NOT NULL THEN json_build_object('id', o.twin_id, 'name', ot.name, 'description', ot.description) END`,
      value: (row) =>
        row.original_twin_id ? { id: row.original_twin_id, name: row.original_twin_name, description: row.original_twin_description } : null,
    },
    'task-count': { sql: (_q, { taskCount }) => taskCount, value: (row) => row.task_count },
  },
  relationships: { images, 'summary-image': summaryImage, twin: toOne('twins', 'twin_id'), original: toOneOrNull('quests', 'original_id') },
});

export const questResource = (row: QuestRow, imageUrl: ImageUrl): ResourceObject => QUEST.resource(row, imageUrl);

/** How the full form's SQL joins the quest `q` to what it shows. */
export const QUEST_JOINS = `JOIN twins t ON t.id = q.twin_id
    LEFT JOIN quests o ON o.id = q.original_id
    LEFT JOIN twins ot ON ot.id = o.twin_id`;

const TASK_COUNT = '(SELECT count(*) FROM quest_tasks k WHERE k.quest_id = q.id)';

/** The full form in SQL (QUEST_JOINS), `imagesBase` the SQL of the absolute URL of `/images/`. */
export const questJsonSql = (imagesBase: string, fieldset?: ReadonlySet<string>): string => QUEST.sql('q', fieldset, { imagesBase, taskCount: TASK_COUNT });

/**
 * The full form of a quest made in the same statement (an embark's copy), whose tasks that statement's
 * own snapshot cannot count: `taskCount` is the SQL that can (the count of the tasks CTE).
 */
export const newQuestJsonSql = (imagesBase: string, taskCount: string): string => QUEST.sql('q', undefined, { imagesBase, taskCount });

/** What `fields[quests]` may name (the full form). */
export const QUEST_FIELDS = QUEST.names;

const TASK = new ResourceForm<TaskRow>({
  type: 'tasks',
  attributes: { name: 'name', description: 'description', position: 'position', created, modified },
  relationships: { quest: toOne('quests', 'quest_id'), place: toOneOrNull('twins', 'place_twin_id') },
});

export const taskResource = (row: TaskRow): ResourceObject => TASK.resource(row);

/** A task's resource object in SQL, of the quest_tasks row aliased `k`. */
export const taskJsonSql = (k: string, fieldset?: ReadonlySet<string>): string => TASK.sql(k, fieldset);

/** What `fields[tasks]` may name. */
export const TASK_FIELDS = TASK.names;
