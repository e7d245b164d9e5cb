import { Injectable } from '@nestjs/common';
import { Sql } from '../database/sql.js';
import { SqlParams, unplannedValue } from '../database/sql-params.js';
import type { Tenant, TwinTenant } from '../common/auth/tenant.js';
import type { CountedJson, PageRequest } from '../common/json-api/pagination.js';
import type { CursorRequest } from '../common/json-api/cursor.js';
import type { Fieldsets, SortDirective } from '../common/json-api/representation.js';
import { KEYSET_ROWS, keysetOrder, keysetPageSql, type KeysetKey, type KeysetRows } from '../database/keyset.js';
import { rowShape, tableShape, withColumns, type RowShape } from '../database/row-shape.js';
import { visibleTwinSql } from '../twins/twin-visibility.js';
import { raiseTasksSuppliedSql, TwinsRepository } from '../twins/twins.repository.js';
import { twinJsonSql } from '../twins/twin.resource.js';
import { imageJsonSql } from '../images/image.resource.js';
import { microsSql } from '../database/timestamps.js';
import { questTasks, quests, select, type Row } from '../database/schema/index.js';
import { newQuestJsonSql, QUEST_JOINS, questJsonSql, taskJsonSql, type QuestRow, type TaskRow } from './quest.resource.js';
import { recordChangesSql } from '../database/change-log.js';

/** What `embark` found and did. */
export interface EmbarkOutcome {
  readable: boolean;
  mine: boolean;
  /** The quest is itself a copy. */
  is_copy: boolean;
  /** The new copy in the full form (JSON text: the resource its change recorded), when the twin embarked. */
  copy: string | null;
}

/** The columns a change needs, read under a row lock. */
export interface LockedQuest extends Pick<Row<typeof quests>, 'id' | 'organization_id' | 'twin_id' | 'name' | 'price' | 'summary_image_id' | 'public' | 'original_id'> {
  /** Created by (or, for a copy, owned by) the acting twin. */
  mine: boolean;
  /** The acting twin may read it: its own, or in the discovery feed. */
  readable: boolean;
  /** Its version (If-Match), as its full form's ETag names it. */
  version: string;
}


export interface DiscoveryFilters {
  owned_by?: string;
  name?: string;
  description?: string;
}

export interface MyQuestFilters extends DiscoveryFilters {
  is_original?: boolean;
  original?: string;
}

export interface NewQuest {
  name: string;
  summary: string;
  description: string;
  summaryImageId: string | null;
  price: string;
}

export interface QuestChanges {
  name?: string;
  summary?: string;
  description?: string;
  public?: boolean;
  price?: string;
  summaryImageId?: string | null;
}

export interface NewTask {
  name: string;
  description: string;
  position: number | undefined;
  placeTwinId: string | null;
}

/**
 * A quest's version: what its full form shows changes it — the quest (`modified`, which its changes and
 * new tasks set), its twin's and its original's twin's names (their `modified`).
 */
const QUEST_VERSION = `concat_ws('.', ${microsSql('q.modified')}, ${microsSql('t.modified')}, ${microsSql('ot.modified')})`;

const FULL_SELECT = `
  SELECT ${QUEST_VERSION} AS version, q.id, q.organization_id, q.twin_id, q.name, q.summary, q.description, q.summary_image_id, q.public,
         q.original_id, q.price, q.created, q.modified,
         t.name AS twin_name, t.description AS twin_description,
         o.twin_id AS original_twin_id, ot.name AS original_twin_name, ot.description AS original_twin_description,
         (SELECT count(*) FROM quest_tasks k WHERE k.quest_id = q.id) AS task_count`;

const FULL_FROM = `
    FROM quests q
    JOIN twins t ON t.id = q.twin_id
    LEFT JOIN quests o ON o.id = q.original_id
    LEFT JOIN twins ot ON ot.id = o.twin_id`;

/** Keys of `sort` on quests, with the cast of a cursor's position values. */
const SORT_KEYS: Record<string, { sql: (q: string) => string; cast: string }> = {
  name: { sql: (q) => `${q}.name`, cast: '::text' },
  created: { sql: (q) => `${q}.created`, cast: '::timestamptz' },
  price: { sql: (q) => `${q}.price`, cast: '::numeric' },
};

/** Newest first unless `sort` says otherwise; the id breaks ties (in the direction of the last key). */
const NEWEST_FIRST: readonly SortDirective[] = [{ key: 'created', descending: true }];
function questKeys(sort: readonly SortDirective[] = NEWEST_FIRST): KeysetKey[] {
  const keys = sort.map(({ key, descending }): KeysetKey => ({ ...SORT_KEYS[key], descending }));
  keys.push({ sql: (q) => `${q}.id`, cast: '::uuid', descending: sort[sort.length - 1].descending });
  return keys;
}

/** How a page of quests is written: the images URL base, sparse fieldsets, included relationships, order. */
export interface QuestDocument {
  imagesBase: string;
  fields: Fieldsets;
  include: ReadonlySet<string>;
  sort?: readonly SortDirective[];
}

/** How a page of tasks is written. */
export interface TaskDocument {
  fields: Fieldsets;
  include: ReadonlySet<string>;
}

/** Where the absolute URL of `/images/` goes in quest SQL (bound by SqlParams.bindWhereUsed when a kept member uses it). */
const IMAGES_BASE = '{{images_base}}';

/**
 * The embark's change (webhook `quest.embarked`): the copy in its full form, recorded by the embark
 * statement itself ($4 the absolute URL of `/images/`), so it commits with the embark.
 */
const EMBARKED_CHANGE = recordChangesSql({
  kind: 'quest.embarked',
  from: `copy q ${QUEST_JOINS}`,
  organization: 'q.organization_id',
  twin: 'q.twin_id',
  subject: 'q.id',
  resource: `${newQuestJsonSql('$4::text', '(SELECT count(*) FROM tasks)')}::text`,
});

/** The two quest lists: the discovery feed, and the acting twin's own quests. */
export type QuestList = 'discovery' | 'mine';

/** The acting twin's own quest ($1 organization, $2 acting twin; `q` quests). */
const OWN_QUEST = `(q.organization_id = $1 AND q.twin_id = $2)`;
/**
 * A quest in the discovery feed of `organization`: public, of a twin the organization sees (the twin
 * visibility rule, twins/twin-visibility.ts). `listed` holds the half every organization sees (public
 * and of a shared twin), kept from the twin by triggers (migration QuestListing); a quest's organization
 * is its twin's, so the other half needs no twin either.
 */
const discoverableQuestSql = (organization: string) => `(q.public AND (q.listed OR q.organization_id = ${organization}))`;
/** A quest the acting twin may read: its own, or one in its discovery feed. */
const readableQuestSql = (organization: string, twin: string) =>
  `((q.organization_id = ${organization} AND q.twin_id = ${twin}) OR ${discoverableQuestSql(organization)})`;
const READABLE_QUEST = readableQuestSql('$1', '$2');

const TASK_COLUMN_NAMES = ['id', 'quest_id', 'name', 'description', 'position', 'place_twin_id', 'created', 'modified'] as const;
const TASK_COLUMNS = select(questTasks, 'k', { only: TASK_COLUMN_NAMES });
const TASK: RowShape<TaskRow> = tableShape(questTasks, TASK_COLUMN_NAMES);

/** What a change of a quest reads under its row lock (LockedQuest). */
const LOCKED_COLUMN_NAMES = ['id', 'organization_id', 'twin_id', 'name', 'price', 'summary_image_id', 'public', 'original_id'] as const;
const LOCKED_COLUMNS = select(quests, 'q', { only: LOCKED_COLUMN_NAMES });
const LOCKED: RowShape<LockedQuest> = withColumns(tableShape(quests, LOCKED_COLUMN_NAMES), { mine: 'boolean', readable: 'boolean', version: 'text' });

/** A quest in the full form (FULL_SELECT). */
const FULL: RowShape<QuestRow> = withColumns(
  tableShape(quests, ['id', 'organization_id', 'twin_id', 'name', 'summary', 'description', 'summary_image_id', 'public', 'original_id', 'price', 'created', 'modified']),
  {
    version: 'text',
    twin_name: 'varchar',
    twin_description: 'text',
    original_twin_id: 'uuid?',
    original_twin_name: 'varchar?',
    original_twin_description: 'text?',
    task_count: 'bigint',
  },
);
const COUNTED_PAGE: RowShape<CountedJson> = rowShape({ count: 'bigint', data: 'text', included: 'text?' });
const DOCUMENT = rowShape({ data: 'text', included: 'text?', version: 'text' });
const VERSION = rowShape({ version: 'text' });
const ID = tableShape(quests, ['id']);
const EMBARKED: RowShape<EmbarkOutcome> = rowShape({ readable: 'boolean', mine: 'boolean', is_copy: 'boolean', copy: 'text?' });

/** Case-insensitive "contains", without LIKE wildcards to escape. */
const contains = (column: string, placeholder: string) => `strpos(lower(${column}), lower(${placeholder})) > 0`;

function textFilters(filters: DiscoveryFilters, params: SqlParams): string[] {
  const where: string[] = [];
  if (filters.owned_by !== undefined) where.push(`q.twin_id = ${params.add(filters.owned_by)}`);
  if (filters.name !== undefined) where.push(contains('q.name', params.add(filters.name)));
  if (filters.description !== undefined) where.push(contains('q.description', params.add(filters.description)));
  return where;
}

/** SQL for quests and their tasks. */
@Injectable()
export class QuestsRepository {
  constructor(
    private readonly sql: Sql,
    private readonly twins: TwinsRepository,
  ) {}

  /**
   * The resources `include` adds to the quests in the CTE `page` ($1 organization, $2 acting twin),
   * each once, as JSON array text: their twins (list form), the originals the acting twin may read
   * (not those already in the page), and images (`images` and `summary-image` name the same ones today).
   */
  private includedSql(document: QuestDocument, imagesBase: string, tenant: TwinTenant, params: SqlParams): string | undefined {
    const parts: string[] = [];
    if (document.include.has('twin')) {
      parts.push(`SELECT ${twinJsonSql('list', 'tw', document.fields.twins)} AS r, 'twins' AS type, tw.id FROM twins tw WHERE tw.id IN (SELECT p.twin_id FROM page p)`);
    }
    if (document.include.has('original')) {
      parts.push(`SELECT ${questJsonSql(imagesBase, document.fields.quests)} AS r, 'quests' AS type, q.id FROM quests q ${QUEST_JOINS}
          WHERE q.id IN (SELECT p.original_id FROM page p) AND q.id NOT IN (SELECT p.id FROM page p) AND ${readableQuestSql(params.add(tenant.organization.id, '::uuid'), params.add(tenant.twin.id, '::uuid'))}`);
    }
    if (document.include.has('images') || document.include.has('summary-image')) {
      parts.push(`SELECT ${imageJsonSql('i', imagesBase, document.fields.images)} AS r, 'images' AS type, i.id FROM images i WHERE i.id IN (SELECT p.summary_image_id FROM page p)`);
    }
    if (parts.length === 0) return undefined;
    return `(SELECT coalesce(json_agg(x.r ORDER BY x.type, x.id), '[]'::json)::text FROM (${parts.join('\n UNION ALL ')}) x)`;
  }

  /** The conditions of a list. */
  private listWhere(list: QuestList, tenant: TwinTenant, filters: MyQuestFilters): { where: string; params: SqlParams } {
    const params = new SqlParams();
    const organization = params.add(tenant.organization.id, '::uuid');
    const where =
      list === 'discovery' ? [discoverableQuestSql(organization)] : [`q.organization_id = ${organization}`, `q.twin_id = ${params.add(tenant.twin.id, '::uuid')}`];
    if (filters.is_original !== undefined) where.push(filters.is_original ? `q.original_id IS NULL` : `q.original_id IS NOT NULL`);
    if (filters.original !== undefined) where.push(`q.original_id = ${params.add(filters.original, '::uuid')}`);
    where.push(...textFilters(filters, params));
    return { where: where.join(' AND '), params };
  }

  /**
   * A page of a quest list (the discovery feed, or the acting twin's quests) as JSON text and its count,
   * in one statement; the quests are only read and built when the page is within the count.
   */
  async page(list: QuestList, tenant: TwinTenant, filters: MyQuestFilters, page: PageRequest, document: QuestDocument): Promise<CountedJson> {
    const { where, params } = this.listWhere(list, tenant, filters);
    const imagesBase = IMAGES_BASE;
    // The page's size and offset are hidden from the planner (unplannedValue, in the LIMIT below): in sight,
    // every execution of the feed was planned again (no generic plan in pg_prepared_statements).
    const offset = params.add(page.offset, '::bigint');
    const order = keysetOrder(questKeys(document.sort), 'q');
    const included = this.includedSql(document, imagesBase, tenant, params);
    const sql = `WITH page AS MATERIALIZED (
         SELECT q.*, row_number() OVER (ORDER BY ${order}) AS n FROM quests q WHERE ${where}
          ORDER BY ${order} LIMIT ${unplannedValue(params.add(page.size, '::int'))} OFFSET ${unplannedValue(offset)})
       SELECT c.count,
              CASE WHEN ${offset} < c.count THEN (
                SELECT coalesce(json_agg(${questJsonSql(imagesBase, document.fields.quests)} ORDER BY q.n), '[]'::json)::text FROM page q ${QUEST_JOINS})
              ELSE '[]' END AS data,
              ${included ? `CASE WHEN ${offset} < c.count THEN ${included} ELSE '[]' END` : 'NULL::text'} AS included
         FROM (SELECT count(*) AS count FROM quests q WHERE ${where}) c`;
    return this.read(list, COUNTED_PAGE, params.bindWhereUsed(sql, IMAGES_BASE, document.imagesBase, '::text'), params.values);
  }

  /** A keyset page of a quest list (keyset.ts), without a count. */
  async keysetPage(list: QuestList, tenant: TwinTenant, filters: MyQuestFilters, request: CursorRequest, document: QuestDocument): Promise<KeysetRows> {
    const { where, params } = this.listWhere(list, tenant, filters);
    const imagesBase = IMAGES_BASE;
    const sql = keysetPageSql(
      {
        alias: 'q',
        rows: (condition, order, limit) => `SELECT q.* FROM quests q WHERE ${where} AND ${condition} ORDER BY ${order} LIMIT ${limit}`,
        keys: questKeys(document.sort),
        items: (pageRows, order) =>
          `(SELECT coalesce(json_agg(${questJsonSql(imagesBase, document.fields.quests)} ORDER BY ${order}), '[]'::json)::text FROM (${pageRows}) q ${QUEST_JOINS})`,
        included: this.includedSql(document, imagesBase, tenant, params),
        direction: request.direction,
        position: request.position,
        size: request.size,
      },
      params,
    );
    return this.read(list, KEYSET_ROWS, params.bindWhereUsed(sql, IMAGES_BASE, document.imagesBase, '::text'), params.values);
  }

  /**
   * A list page's statement: the discovery feed tolerates a replica's lag (DATABASE_REPLICA_URLS); the
   * caller's own quests do not (a client lists them right after creating one).
   */
  private read<R>(list: QuestList, shape: RowShape<R>, sql: string, values: unknown[]): Promise<R> {
    return list === 'discovery' ? this.sql.replicaOne(shape, sql, values) : this.sql.one(shape, sql, values);
  }

  /** One of the acting twin's quests in the full form, as `document` says (JSON text built by PostgreSQL). */
  async findMineJson(tenant: TwinTenant, id: string, document: QuestDocument): Promise<{ data: string; included: string | null; version: string } | undefined> {
    const params = new SqlParams();
    params.add(tenant.organization.id, '::uuid');
    params.add(tenant.twin.id, '::uuid');
    const quest = params.add(id, '::uuid');
    const imagesBase = IMAGES_BASE;
    const sql = `WITH page AS MATERIALIZED (SELECT q.* FROM quests q WHERE q.organization_id = $1 AND q.twin_id = $2 AND q.id = ${quest})
       SELECT ${questJsonSql(imagesBase, document.fields.quests)}::text AS data, ${this.includedSql(document, imagesBase, tenant, params) ?? 'NULL::text'} AS included,
              ${QUEST_VERSION} AS version
         FROM page q ${QUEST_JOINS}`;
    return this.sql.first(DOCUMENT, params.bindWhereUsed(sql, IMAGES_BASE, document.imagesBase, '::text'), params.values);
  }

  /** The version of one of the acting twin's quests (a conditional GET's one cheap statement). */
  async mineVersion(tenant: TwinTenant, id: string): Promise<string | undefined> {
    const row = await this.sql.first(
      VERSION,
      `SELECT ${QUEST_VERSION} AS version FROM quests q ${QUEST_JOINS} WHERE q.organization_id = $1 AND q.twin_id = $2 AND q.id = $3`,
      [tenant.organization.id, tenant.twin.id, id],
    );
    return row?.version;
  }

  /** One of the acting twin's quests in the full form. */
  async findMine(tenant: TwinTenant, id: string): Promise<QuestRow | undefined> {
    return this.sql.first(FULL, `${FULL_SELECT} ${FULL_FROM} WHERE q.organization_id = $1 AND q.twin_id = $2 AND q.id = $3`, [
      tenant.organization.id,
      tenant.twin.id,
      id,
    ]);
  }

  /** Whether the acting twin may read the quest: its own, or one in its discovery feed. */
  async isReadable(tenant: TwinTenant, id: string): Promise<boolean> {
    return this.sql.exists(`SELECT 1 FROM quests q WHERE q.id = $3 AND ${READABLE_QUEST}`, [tenant.organization.id, tenant.twin.id, id]);
  }

  /**
   * Reads a quest for a change (PATCH, new tasks) and locks its row until the transaction ends. The
   * lock conflicts with the share lock an embark takes (`embark`), so "started" cannot change underneath.
   */
  async lock(tenant: TwinTenant, id: string): Promise<LockedQuest | undefined> {
    return this.sql.first(
      LOCKED,
      `SELECT ${LOCKED_COLUMNS},
              ${OWN_QUEST} AS mine,
              ${READABLE_QUEST} AS readable,
              ${QUEST_VERSION} AS version
         FROM quests q ${QUEST_JOINS}
        WHERE q.id = $3
          FOR UPDATE OF q`,
      [tenant.organization.id, tenant.twin.id, id],
    );
  }

  /** A quest is started once any twin embarked on it. Run after `lock`, in the same transaction. */
  async isStarted(id: string): Promise<boolean> {
    return this.sql.exists(`SELECT 1 FROM quests WHERE original_id = $1 LIMIT 1`, [id]);
  }

  async insert(tenant: TwinTenant, quest: NewQuest): Promise<string> {
    const row = await this.sql.one(
      ID,
      `INSERT INTO quests (organization_id, twin_id, name, summary, description, summary_image_id, price)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       RETURNING id`,
      [tenant.organization.id, tenant.twin.id, quest.name, quest.summary, quest.description, quest.summaryImageId, quest.price],
    );
    return row.id;
  }

  async update(tenant: TwinTenant, id: string, changes: QuestChanges): Promise<void> {
    const params = new SqlParams();
    const sets: string[] = [];
    const set = (column: string, value: unknown) => value !== undefined && sets.push(`${column} = ${params.add(value)}`);
    set('name', changes.name);
    set('summary', changes.summary);
    set('description', changes.description);
    set('public', changes.public);
    set('price', changes.price);
    set('summary_image_id', changes.summaryImageId);
    if (sets.length === 0) return;
    await this.sql.run(
      `UPDATE quests SET ${sets.join(', ')}, modified = now()
        WHERE id = ${params.add(id)} AND organization_id = ${params.add(tenant.organization.id)} AND twin_id = ${params.add(tenant.twin.id)}`,
      params.values,
    );
  }

  /**
   * Embarks the acting twin on quest `id`, in one statement (one atomic unit, one round trip): the quest
   * row is share-locked and judged (readable, not its own, an original); when it passes, its copy is
   * inserted from the locked row's values (a concurrent change of the quest is either wholly before or
   * wholly after), with copies of its tasks, the places' `tasks_supplied` raised (place rows locked in
   * id order first, so embarks on quests sharing places cannot deadlock) and the revenue entry of the
   * quest's price for its creator. A second embark by the same twin fails on quests_embark_unique.
   * Answers the judged quest and, when embarked, the copy in the full form: the JSON text its change
   * recorded, built once for both (newQuestJsonSql; building it a second time, as a row for the resource
   * mapper, cost Node and PostgreSQL time on every embark).
   *
   * The change-log lock comes last. `recorded`'s trigger takes the acting twin's change-log lock, held
   * until commit, and PostgreSQL runs the data-modifying CTEs nothing reads after the main query, the
   * last one first: unread, the places and the revenue entry would be written after `recorded`, and an
   * embark waiting for a place another transaction holds would hold that lock, and with it every other
   * change of its twin, meanwhile. The main query reads them in its FROM, so they are written before
   * the target list reads `recorded`.
   */
  async embark(tenant: TwinTenant, id: string, imagesBase: string): Promise<EmbarkOutcome | undefined> {
    return this.sql.first(
      EMBARKED,
      `WITH quest AS (
         SELECT q.id, q.organization_id, q.twin_id, q.name, q.summary, q.description, q.summary_image_id, q.price, q.original_id,
                ${OWN_QUEST} AS mine, ${READABLE_QUEST} AS readable
           FROM quests q
          WHERE q.id = $3
            FOR SHARE
       ), copy AS (
         INSERT INTO quests (organization_id, twin_id, name, summary, description, summary_image_id, public, original_id, price)
         SELECT $1, $2, quest.name, quest.summary, quest.description, quest.summary_image_id, false, quest.id, quest.price
           FROM quest WHERE quest.readable AND NOT quest.mine AND quest.original_id IS NULL
         RETURNING *
       ), tasks AS (
         INSERT INTO quest_tasks (organization_id, quest_id, name, description, position, place_twin_id)
         SELECT copy.organization_id, copy.id, k.name, k.description, k.position, k.place_twin_id FROM copy JOIN quest_tasks k ON k.quest_id = copy.original_id
         RETURNING place_twin_id
       ), ${raiseTasksSuppliedSql('tasks')}, revenue AS (
         INSERT INTO revenue_entries (organization_id, quest_id, twin_id, embarking_twin_id, copy_id, amount)
         SELECT quest.organization_id, quest.id, quest.twin_id, $2, copy.id, quest.price FROM quest, copy
         RETURNING id
       ), recorded AS (${EMBARKED_CHANGE})
       SELECT quest.readable, quest.mine, quest.original_id IS NOT NULL AS is_copy,
              CASE WHEN copy.id IS NOT NULL THEN (SELECT r.resource FROM recorded r) END AS copy
         FROM quest
         LEFT JOIN copy ON true
         -- Read here, so that they are written while this query runs, before recorded (see above).
         CROSS JOIN (SELECT count(*) FROM places) AS places_written
         CROSS JOIN (SELECT count(*) FROM revenue) AS revenue_written`,
      [tenant.organization.id, tenant.twin.id, id, imagesBase],
    );
  }

  /**
   * A page of a quest's tasks in `position` order as JSON text, with the count, in one statement;
   * `include=place` adds the places the caller can see ($1 organization).
   */
  async pageTasks(tenant: TwinTenant, questId: string, page: PageRequest, document: TaskDocument): Promise<CountedJson> {
    const params = new SqlParams();
    const quest = params.add(questId, '::uuid');
    const offset = params.add(page.offset, '::bigint');
    const included = document.include.has('place')
      ? `(SELECT coalesce(json_agg(${twinJsonSql('list', 'tw', document.fields.twins)} ORDER BY tw.id), '[]'::json)::text
            FROM twins tw WHERE tw.id IN (SELECT p.place_twin_id FROM page p) AND ${visibleTwinSql('tw', params.add(tenant.organization.id, '::uuid'))})`
      : undefined;
    return this.sql.one(
      COUNTED_PAGE,
      `WITH page AS MATERIALIZED (
         SELECT k.*, row_number() OVER (ORDER BY k.position, k.created, k.id) AS n FROM quest_tasks k WHERE k.quest_id = ${quest}
          ORDER BY k.position, k.created, k.id LIMIT ${unplannedValue(params.add(page.size, '::int'))} OFFSET ${unplannedValue(offset)})
       SELECT c.count,
              CASE WHEN ${offset} < c.count THEN (SELECT coalesce(json_agg(${taskJsonSql('k', document.fields.tasks)} ORDER BY k.n), '[]'::json)::text FROM page k) ELSE '[]' END AS data,
              ${included ? `CASE WHEN ${offset} < c.count THEN ${included} ELSE '[]' END` : 'NULL::text'} AS included
         FROM (SELECT count(*) AS count FROM quest_tasks WHERE quest_id = ${quest}) c`,
      params.values,
    );
  }

  /** Whether the tenant can see the twin (the twin visibility rule): a task's place must be one. */
  async twinVisible(tenant: Tenant, twinId: string): Promise<boolean> {
    return this.sql.exists(`SELECT 1 FROM twins t WHERE t.id = $2 AND ${visibleTwinSql('t', '$1')}`, [tenant.organization.id, twinId]);
  }

  /**
   * Adds a task (after the last one unless a position is given), counts it in the place twin's
   * `tasks_supplied` and touches the quest's `modified`, all in the caller's transaction.
   */
  async insertTask(tenant: TwinTenant, questId: string, task: NewTask): Promise<TaskRow> {
    const inserted = await this.sql.one(
      TASK,
      `INSERT INTO quest_tasks AS k (organization_id, quest_id, name, description, position, place_twin_id)
       VALUES ($6, $1, $2, $3, coalesce($4::int, (SELECT coalesce(max(position) + 1, 0) FROM quest_tasks WHERE quest_id = $1)), $5)
       RETURNING ${TASK_COLUMNS}`,
      [questId, task.name, task.description, task.position ?? null, task.placeTwinId, tenant.organization.id],
    );
    if (task.placeTwinId) await this.twins.raiseTasksSupplied(task.placeTwinId);
    await this.sql.run(`UPDATE quests SET modified = now() WHERE id = $1`, [questId]);
    return inserted;
  }
}
