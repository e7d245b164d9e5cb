import { Injectable } from '@nestjs/common';
import { Sql } from '../database/sql.js';
import { SqlParams, unplannedValue } from '../database/sql-params.js';
import { events, select } from '../database/schema/index.js';
import { microsSql } from '../database/timestamps.js';
import { CHANGE_ROW, notifyChangeSql, recordChangesSql, type ChangeRow } from '../database/change-log.js';
import { pickColumns, rowShape, tableShape, typed, withColumns, type RowShape } from '../database/row-shape.js';
import type { TwinTenant } from '../common/auth/tenant.js';
import type { CountedJson, PageRequest } from '../common/json-api/pagination.js';
import type { CursorRequest } from '../common/json-api/cursor.js';
import { KEYSET_ROWS, keysetOrder, keysetPageSql, type KeysetKey, type KeysetRows } from '../database/keyset.js';
import { EVENT_COLUMNS, eventJsonSql, type EventRow } from './event.resource.js';

export type { ChangeRow, EventRow };


/** What stream filters compare: an event's name and category. */
export type EventLabels = Pick<EventRow, 'name' | 'category'>;

/** What a stream is limited to (`GET /events/stream?name=…&category=…`). */
export type StreamFilter = Partial<EventLabels>;

/** What a deletion returns: the event's labels as they were, and its change. */
export type DeletedEvent = EventLabels & Pick<ChangeRow, 'position' | 'resource'>;

export interface TimelineFilter {
  name?: string;
  category?: string;
  /** Inclusive lower bound. */
  since?: string;
  /** Exclusive upper bound. */
  until?: string;
}

export interface NewEvent {
  id: string;
  name: string;
  category: string;
  data: Record<string, unknown>;
  occurred: string | null;
}

export interface EventChanges {
  name?: string;
  category?: string;
  /**
   * Merged into the stored data on its top-level keys: a key with a value replaces the stored value
   * (objects included, wholesale), a key set to null is removed, keys the patch does not name are
   * kept; nulls nested inside a value are ordinary values.
   */
  data?: Record<string, unknown>;
  /** The device's time of the event; null clears it, undefined keeps it. */
  occurred?: string | null;
}

const COLUMNS = select(events, 'e', { only: EVENT_COLUMNS });

/** An event's version: `modified`, which every change sets (its document shows nothing else that changes). */
const VERSION = microsSql('e.modified');

/** An event row with its version (an ETag). */
export type VersionedEvent = EventRow & { version: string };

/** The change of a stored event: its position (the stream's message id) and its resource's JSON text. */
export type StoredChange = Pick<ChangeRow, 'position' | 'subject_id' | 'name' | 'category' | 'resource'>;

/**
 * A written event, the position of its change in the change log (the stream's message id), and the
 * resource's JSON text as the change log recorded it (what the write answers).
 */
export type ChangedEvent = VersionedEvent & { position: string; document: string };

const EVENT = tableShape(events, EVENT_COLUMNS);
const VERSIONED: RowShape<VersionedEvent> = withColumns(EVENT, { version: 'text' });
const VERSION_ONLY = rowShape({ version: 'text' });
const POSITION = pickColumns(CHANGE_ROW, ['position']);
const TIMELINE_PAGE: RowShape<CountedJson> = rowShape({ count: 'bigint', data: 'text' });
const DELETED_COUNT = rowShape({ deleted: 'integer' });

/**
 * A write's answer: its columns, and `notified` (pg_notify's void) when the statement announces the change
 * (notifySelect); the two texts differ, so each is checked with its own shape.
 */
const announcing = <R>(shape: RowShape<R>) => ({ quiet: shape, notifying: withColumns(shape, { notified: typed<unknown>() }) });
const CHANGED_EVENT = announcing<ChangedEvent>(withColumns(VERSIONED, { position: 'text', document: 'text' }));
const STORED_CHANGE = announcing<StoredChange>(pickColumns(CHANGE_ROW, ['subject_id', 'position', 'name', 'category', 'resource']));
/** An event's change carries its name and category (null only for other kinds). */
const DELETED_EVENT = announcing<DeletedEvent>(rowShape({ name: 'varchar', category: 'varchar', position: 'text', resource: 'text' }));
const shapeFor = <R>(shapes: { quiet: RowShape<R>; notifying: RowShape<R> }, channel: string | null): RowShape<R> => (channel ? shapes.notifying : shapes.quiet);

/** A PATCH's data ($6) merged into the stored data: keys set, keys the patch sets to null removed. */
const MERGED_DATA = `(data || $6::jsonb) - ARRAY(SELECT key FROM jsonb_each($6::jsonb) WHERE value = 'null'::jsonb)`;

/** The JSON:API resource of row `e`, built in SQL for the change log (and so the stream and webhooks). */
const EVENT_JSON = eventJsonSql('e');

/** The change-log CTE `c` of a write to the events rows of CTE `e` (`from`: e, joined and ordered as the changes are to be). */
function eventChangeSql(kind: 'event.created' | 'event.updated' | 'event.deleted', resource = `${EVENT_JSON}::text`, from = 'e', positionsOf?: string): string {
  return recordChangesSql({ kind, from, organization: 'e.organization_id', twin: 'e.twin_id', subject: 'e.id', name: 'e.name', category: 'e.category', resource, positionsOf });
}

/** `, pg_notify(…)` of the change row `c` when the bus announces through PostgreSQL (channel), else nothing. */
const notifySelect = (channel: string | null) => (channel ? `, ${notifyChangeSql(channel)} AS notified` : '');

/**
 * The timeline's order: `timestamp` then id, both descending unless `ascending` (sort=timestamp); either
 * way events_timeline_idx (twin_id, timestamp DESC, id DESC) answers it, forwards or backwards.
 */
const timelineKeys = (ascending: boolean): KeysetKey[] => [
  { sql: (a) => `${a}."timestamp"`, cast: '::timestamptz', descending: !ascending },
  { sql: (a) => `${a}.id`, cast: '::uuid', descending: !ascending },
];

/** How a timeline page is read and written: its order, and the fieldset of its events. */
export interface TimelineDocument {
  ascending?: boolean;
  fieldset?: ReadonlySet<string>;
}

/**
 * SQL for timeline events. Every statement is scoped to the tenant's
 * organization and acting twin; timeline reads use `events_timeline_idx` (twin_id, timestamp DESC, id DESC).
 * `channel` (the event bus's NOTIFY channel, or null) makes the writes announce themselves.
 */
@Injectable()
export class EventsRepository {
  constructor(private readonly sql: Sql) {}

  /** Stores a new event; undefined when its id is taken (a client-generated id used before, on any timeline). */
  async insert(tenant: TwinTenant, event: NewEvent, channel: string | null): Promise<ChangedEvent | undefined> {
    return this.sql.first(
      shapeFor(CHANGED_EVENT, channel),
      `WITH e AS (
         INSERT INTO events (id, organization_id, twin_id, name, category, data, occurred)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::timestamptz)
         ON CONFLICT (id) DO NOTHING
         RETURNING *
       ), c AS (${eventChangeSql('event.created')})
       SELECT ${COLUMNS}, ${VERSION} AS version, c.position::text AS position, c.resource AS document${notifySelect(channel)} FROM e JOIN c ON c.subject_id = e.id`,
      [event.id, tenant.organization.id, tenant.twin.id, event.name, event.category, JSON.stringify(event.data), event.occurred],
    );
  }

  /**
   * Stores many events in one statement (a batch's run of `add`s), their changes in input order; the
   * changes, in that order. An event whose id is taken (before, or earlier in the same batch) is not
   * stored and has no change. Each change carries the event's resource as JSON text, built once by
   * PostgreSQL for the change log: the batch's answer is made of these texts, never parsed in Node.
   */
  async insertMany(tenant: TwinTenant, batch: NewEvent[], channel: string | null): Promise<StoredChange[]> {
    return this.sql.rows(
      shapeFor(STORED_CHANGE, channel),
      `WITH input AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS i(ord int, id uuid, name varchar(255), category varchar(255), data jsonb, occurred timestamptz)
       ), e AS (
         INSERT INTO events (id, organization_id, twin_id, name, category, data, occurred)
         SELECT i.id, $2, $3, i.name, i.category, i.data, i.occurred FROM input i ORDER BY i.ord
         ON CONFLICT (id) DO NOTHING
         RETURNING *
       ), c AS (${eventChangeSql('event.created', undefined, 'e JOIN input i ON i.id = e.id ORDER BY i.ord', '$3::uuid')})
       SELECT c.subject_id, c.position::text AS position, c.name, c.category, c.resource${notifySelect(channel)}
         FROM c
        ORDER BY c.position`,
      [JSON.stringify(batch.map((event, ord) => ({ ord, ...event }))), tenant.organization.id, tenant.twin.id],
    );
  }

  async find(tenant: TwinTenant, id: string): Promise<VersionedEvent | undefined> {
    return this.sql.first(
      VERSIONED,
      `SELECT ${COLUMNS}, ${VERSION} AS version FROM events e WHERE e.id = $1 AND e.twin_id = $2 AND e.organization_id = $3`,
      [id, tenant.twin.id, tenant.organization.id],
    );
  }

  /** The version of an event of the timeline (a conditional GET's one cheap statement). */
  async version(tenant: TwinTenant, id: string): Promise<string | undefined> {
    const row = await this.sql.first(
      VERSION_ONLY,
      `SELECT ${VERSION} AS version FROM events e WHERE e.id = $1 AND e.twin_id = $2 AND e.organization_id = $3`,
      [id, tenant.twin.id, tenant.organization.id],
    );
    return row?.version;
  }

  /**
   * Merges `changes` in one statement on the stored jsonb, so concurrent patches of different keys
   * never lose each other's keys, and member names are data to PostgreSQL whatever they are (a merge
   * of JavaScript objects is confused by `__proto__` and its kin): `data || patch` sets every named
   * key, then the keys the patch sets to JSON null are removed.
   */
  async update(
    tenant: TwinTenant,
    id: string,
    changes: EventChanges,
    channel: string | null,
    { maxDataTextBytes = null, versions = null }: { maxDataTextBytes?: number | null; versions?: string[] | null } = {},
  ): Promise<ChangedEvent | undefined> {
    return this.sql.first(
      shapeFor(CHANGED_EVENT, channel),
      `WITH e AS (
         UPDATE events
            SET name = COALESCE($4, name),
                category = COALESCE($5, category),
                data = ${MERGED_DATA},
                occurred = CASE WHEN $9::boolean THEN $10::timestamptz ELSE occurred END,
                modified = now()
          WHERE id = $1 AND twin_id = $2 AND organization_id = $3
            AND ($7::int IS NULL OR octet_length((${MERGED_DATA})::text) <= $7::int)
            AND ($8::text[] IS NULL OR ${microsSql('modified')} = ANY ($8::text[]))
         RETURNING *
       ), c AS (${eventChangeSql('event.updated')})
       SELECT ${COLUMNS}, ${VERSION} AS version, c.position::text AS position, c.resource AS document${notifySelect(channel)} FROM e JOIN c ON c.subject_id = e.id`,
      [
        id,
        tenant.twin.id,
        tenant.organization.id,
        changes.name ?? null,
        changes.category ?? null,
        JSON.stringify(changes.data ?? {}),
        maxDataTextBytes,
        versions,
        changes.occurred !== undefined,
        changes.occurred ?? null,
      ],
    );
  }

  /**
   * Deletes an event of the tenant's timeline (at one of `versions`, when given): its name and category
   * as they were and its change, or undefined when there was no such event.
   */
  async delete(tenant: TwinTenant, id: string, channel: string | null, versions: string[] | null = null): Promise<DeletedEvent | undefined> {
    return this.sql.first(
      shapeFor(DELETED_EVENT, channel),
      `WITH e AS (
         DELETE FROM events WHERE id = $1 AND twin_id = $2 AND organization_id = $3
            AND ($4::text[] IS NULL OR ${microsSql('modified')} = ANY ($4::text[]))
         RETURNING id, organization_id, twin_id, name, category
       ), c AS (${eventChangeSql('event.deleted', `json_build_object('type', 'events', 'id', e.id)::text`)})
       SELECT c.name, c.category, c.position::text AS position, c.resource${notifySelect(channel)} FROM c`,
      [id, tenant.twin.id, tenant.organization.id, versions],
    );
  }

  /**
   * A page of the timeline as JSON text, newest first (equal timestamps by id, newest first too), and
   * the count, in one statement; the events are only read when the page is within the count.
   */
  async pageTimeline(tenant: TwinTenant, filter: TimelineFilter, page: PageRequest, document: TimelineDocument = {}): Promise<CountedJson> {
    const { rows: where, counted, params, filtered, timeline } = timelineWhere(tenant, filter);
    const size = params.add(page.size, '::int');
    const offset = params.add(page.offset, '::bigint');
    const order = keysetOrder(timelineKeys(document.ascending ?? false), 'e');
    // The whole timeline's count is kept by the writes (migration TwinEventCounts): its cost does not grow
    // with the twin's events. A filtered page counts its matches.
    const count = filtered
      ? `SELECT count(*) AS count FROM events e WHERE ${counted}`
      : // An aggregate, so the row is read once (a scalar subquery here became two init plans, one per use of c.count).
        `SELECT coalesce(max(n.total), 0) AS count FROM twin_event_counts n WHERE n.organization_id = ${timeline.organization} AND n.twin_id = ${timeline.twin}`;
    return this.sql.one(
      TIMELINE_PAGE,
      `SELECT c.count, CASE WHEN ${offset} < c.count THEN (
                SELECT coalesce(json_agg(${eventJsonSql('e', document.fieldset)} ORDER BY ${order}), '[]'::json)::text
                  FROM (SELECT * FROM events e WHERE ${where} ORDER BY ${order} LIMIT ${unplannedValue(size)} OFFSET ${unplannedValue(offset)}) e)
              ELSE '[]' END AS data
         FROM (${count}) c`,
      params.values,
    );
  }

  /** A keyset page of the timeline (keyset.ts): an index range scan from the position, however deep. */
  async keysetTimeline(tenant: TwinTenant, filter: TimelineFilter, request: CursorRequest, document: TimelineDocument = {}): Promise<KeysetRows> {
    const { rows: where, params } = timelineWhere(tenant, filter, 't');
    const sql = keysetPageSql(
      {
        rows: (condition, order, limit) => `SELECT * FROM events t WHERE ${where} AND ${condition} ORDER BY ${order} LIMIT ${limit}`,
        keys: timelineKeys(document.ascending ?? false),
        items: (pageRows, order) => `(SELECT coalesce(json_agg(${eventJsonSql('t', document.fieldset)} ORDER BY ${order}), '[]'::json)::text FROM (${pageRows}) t)`,
        direction: request.direction,
        position: request.position,
        size: request.size,
      },
      params,
    );
    return this.sql.one(KEYSET_ROWS, sql, params.values);
  }

  /**
   * The stream's replay: the changes of the tenant's timeline after `position`, in position order (which
   * is commit order within a twin: migration ChangeLog), as far as the filter takes them. The twin's own
   * moves (`twin.moved`) are on its timeline's stream too, and its geofence crossings (events: a filter by
   * name or category takes them as it takes events; moves it leaves out).
   */
  async changesAfter(tenant: TwinTenant, position: string, limit: number, filter: StreamFilter = {}): Promise<ChangeRow[]> {
    return this.sql.rows(
      CHANGE_ROW,
      `SELECT c.position::text AS position, c.kind, c.twin_id, c.subject_id, c.name, c.category, c.resource FROM changes c
        WHERE c.twin_id = $1 AND c.organization_id = $2 AND c.position > $3::bigint AND (c.kind LIKE 'event.%' OR c.kind IN ('twin.moved', 'geofence.entered', 'geofence.exited'))
          AND ($5::text IS NULL OR c.name = $5) AND ($6::text IS NULL OR c.category = $6)
        ORDER BY c.position
        LIMIT $4`,
      [tenant.twin.id, tenant.organization.id, position, limit, filter.name ?? null, filter.category ?? null],
    );
  }

  /** A change by position (a notification that could not carry it); undefined once pruned. */
  async change(position: string): Promise<ChangeRow | undefined> {
    return this.sql.first(
      CHANGE_ROW,
      `SELECT position::text AS position, kind, twin_id, subject_id, name, category, resource FROM changes WHERE position = $1::bigint`,
      [position],
    );
  }

  /**
   * Where the creation of an event of the tenant's timeline stands in the change log: how a client that
   * kept an event id as its `Last-Event-ID` (before positions existed) resumes. Undefined when unknown.
   */
  async creationPosition(tenant: TwinTenant, eventId: string): Promise<string | undefined> {
    const row = await this.sql.first(
      POSITION,
      `SELECT position::text AS position FROM changes
        WHERE subject_id = $1 AND twin_id = $2 AND organization_id = $3 AND kind = 'event.created'`,
      [eventId, tenant.twin.id, tenant.organization.id],
    );
    return row?.position;
  }

  /**
   * Deletes at most `batch` events older than `days` (retention: housekeeping across tenants, no change
   * recorded); the number deleted.
   */
  async deleteOlderThan(days: number, batch: number): Promise<number> {
    return this.sql.value(
      DELETED_COUNT,
      `WITH gone AS (
         DELETE FROM events WHERE ctid = ANY (ARRAY(
           SELECT ctid FROM events WHERE "timestamp" < now() - make_interval(days => $1) LIMIT $2 FOR UPDATE SKIP LOCKED))
         RETURNING 1)
       SELECT count(*)::int AS deleted FROM gone`,
      [days, batch],
    );
  }
}

/**
 * The timeline's conditions over the events row aliased `e`, in two forms that select the same rows and
 * differ in what they let the planner do:
 * - `rows`, for statements that read events in timeline order: `organization_id = $n`. With the statistics
 *   on (twin_id, organization_id) (migration EventTimelineStatistics) PostgreSQL knows the organization
 *   follows from the twin, so even a generic plan walks events_timeline_idx in order and stops at the page.
 *   Without them it multiplied the two selectivities, expected a single row, and chose a bitmap scan and
 *   a sort of the whole timeline, hundreds of times the cost of walking the index to the page.
 * - `counted`, for `count(*)`: the organization as `IS NOT DISTINCT FROM` (the column is NOT NULL, so it
 *   means `=`), which no index can answer, so the planner cannot AND in an index leading with
 *   organization_id (events_organization_id_id_key; events_organization_idx before migration CitusReady),
 *   whose range is every event of the organization (most of a count's time at 20M events).
 * `timeline` holds the placeholders of its twin and organization; `filtered` says whether a filter narrows it.
 */
function timelineWhere(
  tenant: TwinTenant,
  filter: TimelineFilter,
  e = 'e',
): { rows: string; counted: string; params: SqlParams; filtered: boolean; timeline: { twin: string; organization: string } } {
  const p = new SqlParams();
  // Hidden from the planner (unplannedValue), like the page's LIMIT and OFFSET: a custom plan that knows the
  // twin costs its statement a little below the generic plan, and PostgreSQL then plans every execution.
  const timeline = { twin: unplannedValue(p.add(tenant.twin.id, '::uuid')), organization: unplannedValue(p.add(tenant.organization.id, '::uuid')) };
  const filters: string[] = [];
  if (filter.name !== undefined) filters.push(`${e}.name = ${p.add(filter.name)}`);
  if (filter.category !== undefined) filters.push(`${e}.category = ${p.add(filter.category)}`);
  if (filter.since !== undefined) filters.push(`${e}."timestamp" >= ${p.add(filter.since, '::timestamptz')}`);
  if (filter.until !== undefined) filters.push(`${e}."timestamp" < ${p.add(filter.until, '::timestamptz')}`);
  const where = (organization: string) => [`${e}.twin_id = ${timeline.twin}`, organization, ...filters].join(' AND ');
  return {
    rows: where(`${e}.organization_id = ${timeline.organization}`),
    counted: where(`${e}.organization_id IS NOT DISTINCT FROM ${timeline.organization}`),
    params: p,
    filtered: filters.length > 0,
    timeline,
  };
}
