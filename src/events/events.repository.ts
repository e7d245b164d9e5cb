import { Injectable } from '@nestjs/common';
import { Sql } from '../database/sql.js';
import { SqlParams } from '../database/sql-params.js';
import { events, idempotencyKeys, select, type Row } from '../database/schema/index.js';
import { microsSql } from '../database/timestamps.js';
import type { TwinTenant } from '../common/auth/tenant.js';
import type { CountedJson, PageRequest } from '../common/json-api/pagination.js';
import type { CursorRequest } from '../common/json-api/cursor.js';
import type { ResourceObject } from '../common/json-api/resource.js';
import { keysetOrder, keysetPageSql, type KeysetKey, type KeysetRows } from '../database/keyset.js';
import { EVENT_COLUMNS, eventJsonSql, type EventRow } from './event.resource.js';

export type { EventRow };


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
}

export type IdempotencyRecord = Pick<Row<typeof idempotencyKeys>, 'request_hash' | 'response_status'> & { response_body: ResourceObject | null };

const COLUMNS = select(events, 'e', { only: EVENT_COLUMNS });

/** An event's version: `modified`, which every change sets (its document shows nothing else that changes). */
const VERSION = microsSql('e.modified');

/** An event row with its version (an ETag). */
export type VersionedEvent = EventRow & { version: string };

/** A PATCH's data ($6) merged into the stored data: keys set, keys the patch sets to null removed. */
const MERGED_DATA = `(data || $6::jsonb) - ARRAY(SELECT key FROM jsonb_each($6::jsonb) WHERE value = 'null'::jsonb)`;

/** PostgreSQL's NOTIFY payload limit is 8000 bytes; bigger events are announced by id only. */
const NOTIFY_PAYLOAD_MAX = 7900;

/** The JSON:API resource of row `e`, built in SQL for the NOTIFY payload. */
const EVENT_JSON = eventJsonSql('e');

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
 * `, pg_notify(…)` of a change to row `e`, evaluated in the writing statement so that PostgreSQL
 * delivers it exactly when (and only if) the transaction commits; `FROM` clause part included. The
 * payload carries the resource when it fits, otherwise only `{op, twin, id}` and listeners read the row.
 */
function notifySql(channel: string | null, op: 'created' | 'updated' | 'deleted'): { select: string; from: string } {
  if (!channel) return { select: '', from: '' };
  const reference = `json_build_object('op', '${op}', 'twin', e.twin_id, 'id', e.id)::text`;
  if (op === 'deleted') return { select: `, pg_notify('${channel}', ${reference}) AS notified`, from: '' };
  return {
    select: `, pg_notify('${channel}', CASE WHEN octet_length(n.payload) <= ${NOTIFY_PAYLOAD_MAX} THEN n.payload ELSE ${reference} END) AS notified`,
    from: `, LATERAL (SELECT json_build_object('op', '${op}', 'twin', e.twin_id, 'id', e.id, 'resource', ${EVENT_JSON})::text AS payload) n`,
  };
}

/**
 * SQL for timeline events and their idempotency keys. Every statement is scoped to the tenant's
 * organization and acting twin; timeline reads use `events_timeline_idx` (twin_id, timestamp DESC, id DESC).
 * `channel` (the event bus's NOTIFY channel, or null) makes the writes announce themselves.
 */
@Injectable()
export class EventsRepository {
  constructor(private readonly sql: Sql) {}

  async insert(tenant: TwinTenant, event: NewEvent, channel: string | null): Promise<VersionedEvent> {
    const notify = notifySql(channel, 'created');
    const rows: VersionedEvent[] = await this.sql.query(
      `WITH e AS (
         INSERT INTO events (id, organization_id, twin_id, name, category, data)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb)
         RETURNING *
       )
       SELECT ${COLUMNS}, ${VERSION} AS version${notify.select} FROM e${notify.from}`,
      [event.id, tenant.organization.id, tenant.twin.id, event.name, event.category, JSON.stringify(event.data)],
    );
    return rows[0];
  }

  async find(tenant: TwinTenant, id: string): Promise<VersionedEvent | undefined> {
    const rows: VersionedEvent[] = await this.sql.query(
      `SELECT ${COLUMNS}, ${VERSION} AS version FROM events e WHERE e.id = $1 AND e.twin_id = $2 AND e.organization_id = $3`,
      [id, tenant.twin.id, tenant.organization.id],
    );
    return rows[0];
  }

  /** The version of an event of the timeline (a conditional GET's one cheap statement). */
  async version(tenant: TwinTenant, id: string): Promise<string | undefined> {
    const rows: { version: string }[] = await this.sql.query(
      `SELECT ${VERSION} AS version FROM events e WHERE e.id = $1 AND e.twin_id = $2 AND e.organization_id = $3`,
      [id, tenant.twin.id, tenant.organization.id],
    );
    return rows[0]?.version;
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
  ): Promise<VersionedEvent | undefined> {
    const notify = notifySql(channel, 'updated');
    const rows: VersionedEvent[] = await this.sql.query(
      `WITH e AS (
         UPDATE events
            SET name = COALESCE($4, name),
                category = COALESCE($5, category),
                data = ${MERGED_DATA},
                modified = now()
          WHERE id = $1 AND twin_id = $2 AND organization_id = $3
            AND ($7::int IS NULL OR octet_length((${MERGED_DATA})::text) <= $7::int)
            AND ($8::text[] IS NULL OR ${microsSql('modified')} = ANY ($8::text[]))
         RETURNING *
       )
       SELECT ${COLUMNS}, ${VERSION} AS version${notify.select} FROM e${notify.from}`,
      [id, tenant.twin.id, tenant.organization.id, changes.name ?? null, changes.category ?? null, JSON.stringify(changes.data ?? {}), maxDataTextBytes, versions],
    );
    return rows[0];
  }

  /** True when the event existed on the tenant's timeline (at one of `versions`, when given) and is gone now. */
  async delete(tenant: TwinTenant, id: string, channel: string | null, versions: string[] | null = null): Promise<boolean> {
    const notify = notifySql(channel, 'deleted');
    const rows: unknown[] = await this.sql.query(
      `WITH e AS (
         DELETE FROM events WHERE id = $1 AND twin_id = $2 AND organization_id = $3
            AND ($4::text[] IS NULL OR ${microsSql('modified')} = ANY ($4::text[]))
         RETURNING id, twin_id
       )
       SELECT e.id${notify.select} FROM e`,
      [id, tenant.twin.id, tenant.organization.id, versions],
    );
    return rows.length > 0;
  }

  /**
   * A page of the timeline as JSON text, newest first (equal timestamps by id, newest first too), and
   * the count, in one statement; the events are only read when the page is within the count.
   */
  async pageTimeline(tenant: TwinTenant, filter: TimelineFilter, page: PageRequest, document: TimelineDocument = {}): Promise<CountedJson> {
    const { where, params } = timelineWhere(tenant, filter);
    const size = params.add(page.size, '::int');
    const offset = params.add(page.offset, '::bigint');
    const order = keysetOrder(timelineKeys(document.ascending ?? false), 'e');
    const rows: CountedJson[] = await this.sql.query(
      `SELECT c.count, CASE WHEN ${offset} < c.count THEN (
                SELECT coalesce(json_agg(${eventJsonSql('e', document.fieldset)} ORDER BY ${order}), '[]'::json)::text
                  FROM (SELECT * FROM events e WHERE ${where} ORDER BY ${order} LIMIT ${size} OFFSET ${offset}) e)
              ELSE '[]' END AS data
         FROM (SELECT count(*) AS count FROM events e WHERE ${where}) c`,
      params.values,
    );
    return rows[0];
  }

  /** A keyset page of the timeline (keyset.ts): an index range scan from the position, however deep. */
  async keysetTimeline(tenant: TwinTenant, filter: TimelineFilter, request: CursorRequest, document: TimelineDocument = {}): Promise<KeysetRows> {
    const { where, params } = timelineWhere(tenant, filter, 't');
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
    return (await this.sql.query(sql, params.values))[0];
  }

  /** Events created after `afterId` (UUIDv7 order = creation order), oldest first: the stream's replay. */
  async createdAfter(tenant: TwinTenant, afterId: string, limit: number): Promise<EventRow[]> {
    return this.sql.query(
      `SELECT ${COLUMNS} FROM events e
        WHERE e.twin_id = $1 AND e.organization_id = $2 AND e.id > $3
        ORDER BY e.id
        LIMIT $4`,
      [tenant.twin.id, tenant.organization.id, afterId, limit],
    );
  }

  /**
   * Claims an idempotency key for this request, in the caller's transaction. True when this request
   * owns it (new key, or one older than the retention that is taken over). When another transaction
   * holds the same key uncommitted, PostgreSQL makes this statement wait for it: concurrent retries
   * therefore never both insert an event.
   */
  async claimIdempotencyKey(tenant: TwinTenant, key: string, hash: string, retentionHours: number): Promise<boolean> {
    const rows: unknown[] = await this.sql.query(
      `INSERT INTO idempotency_keys AS k (twin_id, key, organization_id, request_hash)
       VALUES ($1, $2, $3, $4)
       ON CONFLICT (twin_id, key) DO UPDATE
             SET request_hash = EXCLUDED.request_hash, organization_id = EXCLUDED.organization_id,
                 response_status = NULL, response_body = NULL, event_id = NULL, created = now()
           WHERE k.created < now() - make_interval(hours => $5)
       RETURNING k.key`,
      [tenant.twin.id, key, tenant.organization.id, hash, retentionHours],
    );
    return rows.length > 0;
  }

  async completeIdempotencyKey(tenant: TwinTenant, key: string, status: number, body: ResourceObject): Promise<void> {
    await this.sql.query(
      `UPDATE idempotency_keys SET response_status = $3, response_body = $4::jsonb, event_id = $5
        WHERE twin_id = $1 AND key = $2`,
      [tenant.twin.id, key, status, JSON.stringify(body), body.id],
    );
  }

  async findIdempotencyKey(tenant: TwinTenant, key: string): Promise<IdempotencyRecord | undefined> {
    const rows: IdempotencyRecord[] = await this.sql.query(
      `SELECT request_hash, response_status, response_body FROM idempotency_keys
        WHERE twin_id = $1 AND key = $2 AND organization_id = $3`,
      [tenant.twin.id, key, tenant.organization.id],
    );
    return rows[0];
  }

  /** Deletes keys past the retention, a bounded batch at a time (not tenant data: housekeeping). */
  async purgeIdempotencyKeys(retentionHours: number, batch = 5000): Promise<number> {
    const rows: unknown[] = await this.sql.query(
      `DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
         SELECT ctid FROM idempotency_keys WHERE created < now() - make_interval(hours => $1) LIMIT $2))
       RETURNING 1`,
      [retentionHours, batch],
    );
    return rows.length;
  }
}

/** The timeline's conditions over the events row aliased `e`. */
function timelineWhere(tenant: TwinTenant, filter: TimelineFilter, e = 'e'): { where: string; params: SqlParams } {
  const p = new SqlParams();
  const clauses = [`${e}.twin_id = ${p.add(tenant.twin.id)}`, `${e}.organization_id = ${p.add(tenant.organization.id)}`];
  if (filter.name !== undefined) clauses.push(`${e}.name = ${p.add(filter.name)}`);
  if (filter.category !== undefined) clauses.push(`${e}.category = ${p.add(filter.category)}`);
  if (filter.since !== undefined) clauses.push(`${e}."timestamp" >= ${p.add(filter.since, '::timestamptz')}`);
  if (filter.until !== undefined) clauses.push(`${e}."timestamp" < ${p.add(filter.until, '::timestamptz')}`);
  return { where: clauses.join(' AND '), params: p };
}
