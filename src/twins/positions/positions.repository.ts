import { Injectable } from '@nestjs/common';
import { booleanArrayLiteral, instantArrayLiteral, numberArrayLiteral } from '../../database/array-literal.js';
import { notifyChangeSql, recordChangesSql } from '../../database/change-log.js';
import { joinJsonParts, joinJsonPartsOf, jsonArraysPartsSql } from '../../database/json-parts.js';
import { rowShape } from '../../database/row-shape.js';
import { Sql } from '../../database/sql.js';
import { SqlParams } from '../../database/sql-params.js';
import { isoTimestampSql } from '../../database/timestamps.js';
import { crossingChangesJsonSql, crossingLookupFor, geofenceCrossingsSql, type HeldCrossingsSql } from '../../geofences/geofence-crossings.js';
import type { HeldCrossings } from '../../geofences/geofence-index.js';
import type { Position } from './position-body.js';

/**
 * A position as JSON text, the resource of a `twin.moved` change (what the stream and webhooks carry):
 * the row aliased `a` (its `twin_id`, `occurred`, `location` and measures) in the upload's own form.
 */
export const positionJsonSql = (a: string): string =>
  `json_build_object('type', 'positions',
     'attributes', json_build_object('coordinates', json_build_array(ST_X(${a}.location), ST_Y(${a}.location)), 'occurred', ${isoTimestampSql(`${a}.occurred`)},
                                     'accuracy', ${a}.accuracy, 'speed', ${a}.speed, 'heading', ${a}.heading, 'altitude', ${a}.altitude),
     'relationships', json_build_object('twin', json_build_object('data', json_build_object('type', 'twins', 'id', ${a}.twin_id))))::text`;

/**
 * The `twin.moved` change CTE `moves` of the twins rows of CTE `moved` (id, organization_id, and the
 * position's columns). In twin id order: each twin's change takes that twin's change-log lock, and
 * statements moving several twins must take them in one order, or two could deadlock.
 */
export const twinMovedChangeSql = (moved: string): string =>
  recordChangesSql({ kind: 'twin.moved', from: `${moved} m ORDER BY m.twin_id`, organization: 'm.organization_id', twin: 'm.twin_id', subject: 'm.twin_id', resource: positionJsonSql('m') });

/** What one twin's part of a recorded batch did: its new positions, and its `twin.moved` change when it moved. */
export interface RecordedTwin {
  twin_id: string;
  /** Positions stored (the others were duplicates). */
  stored: number;
  /** The change's position in the change log, and its resource, when the twin moved. */
  position: string | null;
  resource: string | null;
  /** The geofence crossings it recorded: a JSON array of change rows in position order, or null (geofence-crossings.ts). */
  crossings: string | null;
  /**
   * The version of the organization's geofences a statement that looks crossings up per chunk saw
   * (migration GeofenceSets), null when it never had one; null from a smaller statement (not read).
   */
  geofences: string | null;
}
const RECORDED = rowShape({ twin_id: 'uuid', stored: 'integer', position: 'text?', resource: 'text?', crossings: 'text?', geofences: 'text?' });
const RECORDED_NOTIFYING = rowShape({ twin_id: 'uuid', stored: 'integer', position: 'text?', resource: 'text?', crossings: 'text?', geofences: 'text?', notified: 'text?' });

/**
 * Where the statement of `record` takes held crossings (HeldCrossingsSql): after its ten other
 * parameters; its positions by index from its own arrays, where its twins were from `owned`.
 */
const FIRST_OF = '$12::int4[]';
const HELD_CROSSINGS: HeldCrossingsSql = {
  version: '$11::bigint',
  firstOf: FIRST_OF,
  firstTwin: '$13::int4[]',
  firstGeofence: '$14::int4[]',
  point: '$15::int4[]',
  geofence: '$16::int4[]',
  entered: '$17::boolean[]',
  ids: '$18::uuid[]',
  twinOf: (i) => `($2::uuid[])[($3::int4[])[${i}]]`,
  occurredOf: (i) => `($4::timestamptz[])[${i}]`,
  locationOf: (i) => `ST_SetSRID(ST_MakePoint(($5::float8[])[${i}], ($6::float8[])[${i}]), 4326)`,
  allNew: `(SELECT count(*) FROM stored) = cardinality($3::int4[])
           AND NOT EXISTS (SELECT 1 FROM owned o WHERE o.was_occurred >= ($4::timestamptz[])[(${FIRST_OF})[array_position($2::uuid[], o.id)]])`,
  before: '(SELECT o.id AS twin_id, o.was_at AS location FROM owned o)',
};

/**
 * `pg_notify` of every change CTE `moves` and `geofence_changes` recorded for the twin `twin` (SQL), in
 * position order (a volatile select list is evaluated after the sort), so a stream never gets a later
 * position before an earlier one; the number announced. Whether the twin is streamed is asked once, after
 * all its changes were written (their count is read first): a batch records ~90 crossings of one twin.
 */
export const notifyTwinChangesSql = (channel: string, moves: string, twin: string): string => {
  const changes = `SELECT * FROM ${moves} m WHERE m.twin_id = ${twin} UNION ALL SELECT * FROM geofence_changes gc WHERE gc.twin_id = ${twin}`;
  return `(SELECT count(*) FROM (SELECT ${notifyChangeSql(channel, 'a', 's.streamed')} AS notified
                            FROM (SELECT * FROM (${changes}) a ORDER BY a.position) a,
                                 (SELECT twin_is_streamed(${twin}) AS streamed FROM (SELECT count(*) FROM (${changes}) k) k) s) n)::text`;
};

/** A position of a track, read to be drawn as a line. */
export interface TrackRow {
  lon: number;
  lat: number;
  occurred: string;
  accuracy: number | null;
  speed: number | null;
  heading: number | null;
  altitude: number | null;
}
const TRACK_ROW = rowShape({ lon: 'float8', lat: 'float8', occurred: 'timestamptz', accuracy: 'float8?', speed: 'float8?', heading: 'float8?', altitude: 'float8?' });
const OWN = rowShape({ own: 'boolean' });
const TRACK_PARTS = rowShape({ own: 'boolean', count: 'integer', last: 'text?', part: 'text?', g: 'integer?' });
/** Point features a part of a track page (json-parts.ts): ~210 bytes each, a part ~21 kB. */
const FEATURES_PER_PART = 100;
const TRACK_LINE_PARTS = rowShape({ own: 'boolean', count: 'integer', last: 'text?', coordinates: 'text?', times: 'text?', g: 'integer?' });
/** Vertices a part of a track's line: ~70 bytes each (coordinates and time), a part ~28 kB. */
const VERTICES_PER_PART = 400;

/** Which part of a twin's track to read: `since` inclusive, `until` exclusive, after a page's last `occurred`. */
export interface TrackRange {
  since?: string;
  until?: string;
  after?: string;
  size: number;
}

/**
 * SQL of positions (migration Positions). A batch of positions is one statement: the positions stored
 * (a duplicate of a twin and `occurred` is skipped), each twin moved to its newest one when that is newer
 * than where the twin is (`location_occurred`), and a `twin.moved` change per moved twin. Track pages
 * read the primary key alone (it covers the columns shown), in `occurred` order.
 */
@Injectable()
export class PositionsRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Stores positions of the organization's twins (`twinIds[i]` is position i's twin). A twin of another
   * organization, or none, gets no row: the answer names only the organization's twins, each once.
   * `channel` (the event bus's NOTIFY channel, or null) makes the moves announce themselves. `held`: the
   * crossings as this instance found them (geofence-index.ts), for a statement that looks crossings up per
   * chunk to take when they are current.
   */
  async record(organizationId: string, twinIds: readonly string[], positions: readonly Position[], channel: string | null, held?: HeldCrossings): Promise<RecordedTwin[]> {
    // Each twin once, and each position by its twin's number: a batch of one twin sends its id once.
    const twins = [...new Set(twinIds)];
    const numberOf = new Map(twins.map((id, index) => [id, index + 1]));
    const column = (key: 'lon' | 'lat' | 'accuracy' | 'speed' | 'heading' | 'altitude') => numberArrayLiteral(positions.map((position) => position[key]));
    const lookup = crossingLookupFor(positions.length, '$1::uuid', held && HELD_CROSSINGS);
    const oneBased = (indexes: readonly number[]) => numberArrayLiteral(indexes.map((index) => index + 1));
    const heldValues =
      held && lookup.per === 'chunk'
        ? [held.version, oneBased(held.firstOf), numberArrayLiteral(held.firstTwin), numberArrayLiteral(held.firstGeofence), oneBased(held.point), numberArrayLiteral(held.geofence), booleanArrayLiteral(held.entered), held.ids]
        : [];
    return this.sql.rows(
      channel ? RECORDED_NOTIFYING : RECORDED,
      `WITH input AS (
         SELECT ($2::uuid[])[i.twin] AS twin_id, i.occurred, i.lon, i.lat, i.accuracy, i.speed, i.heading, i.altitude
           FROM unnest($3::int4[], $4::timestamptz[], $5::float8[], $6::float8[], $7::float8[], $8::float8[], $9::float8[], $10::float8[])
             AS i(twin, occurred, lon, lat, accuracy, speed, heading, altitude)
       ), owned AS MATERIALIZED (
         SELECT t.id, t.location AS was_at, t.location_occurred AS was_occurred
           FROM twins t WHERE t.organization_id = $1 AND t.id = ANY ($2::uuid[]) ORDER BY t.id FOR NO KEY UPDATE
       ), stored AS (
         INSERT INTO positions (organization_id, twin_id, occurred, location, accuracy, speed, heading, altitude)
         SELECT $1, i.twin_id, i.occurred, ST_SetSRID(ST_MakePoint(i.lon, i.lat), 4326), i.accuracy, i.speed, i.heading, i.altitude
           FROM input i WHERE i.twin_id IN (SELECT o.id FROM owned o)
         ON CONFLICT (organization_id, twin_id, occurred) DO NOTHING
         RETURNING *
       ), newest AS (
         SELECT DISTINCT ON (s.twin_id) s.* FROM stored s ORDER BY s.twin_id, s.occurred DESC
       ), moved AS (
         UPDATE twins t SET location = n.location, location_occurred = n.occurred, modified = now()
           FROM newest n
          WHERE t.id = n.twin_id AND t.organization_id = $1 AND (t.location_occurred IS NULL OR t.location_occurred < n.occurred)
         RETURNING n.*
       ), c AS (${twinMovedChangeSql('moved')}
       ), steps AS (
         -- Every new position newer than where the twin was (read from its locked row), each after the one
         -- before it, the first after that location: the twin's path, for its geofence crossings.
         SELECT $1::uuid AS organization_id, s.twin_id, s.occurred, s.location,
                CASE WHEN row_number() OVER w = 1 THEN o.was_at ELSE lag(s.location) OVER w END AS before
           FROM stored s JOIN owned o ON o.id = s.twin_id
          WHERE o.was_occurred IS NULL OR s.occurred > o.was_occurred
         WINDOW w AS (PARTITION BY s.twin_id ORDER BY s.occurred)
       ), ${geofenceCrossingsSql('steps', lookup, twins.length === 1 ? '($2::uuid[])[1]' : undefined)}
       SELECT o.id AS twin_id, coalesce(n.stored, 0)::int AS stored, c.position::text AS position, c.resource, ${crossingChangesJsonSql('o.id', channel)} AS crossings,
              ${lookup.per === 'chunk' ? '(SELECT s.version::text FROM geofence_sets s WHERE s.organization_id = $1)' : 'NULL::text'} AS geofences
              ${channel ? `, ${notifyTwinChangesSql(channel, 'c', 'o.id')} AS notified` : ''}
         FROM owned o
         LEFT JOIN (SELECT s.twin_id, count(*) AS stored FROM stored s GROUP BY s.twin_id) n ON n.twin_id = o.id
         LEFT JOIN c ON c.twin_id = o.id`,
      [
        organizationId,
        twins,
        numberArrayLiteral(twinIds.map((id) => numberOf.get(id)!)),
        instantArrayLiteral(positions.map((position) => position.occurred)),
        column('lon'),
        column('lat'),
        column('accuracy'),
        column('speed'),
        column('heading'),
        column('altitude'),
        ...heldValues,
      ],
    );
  }

  /** Whether the organization has this twin. */
  async ownTwin(organizationId: string, twinId: string): Promise<boolean> {
    return (await this.sql.one(OWN, `SELECT EXISTS (SELECT 1 FROM twins WHERE id = $2 AND organization_id = $1) AS own`, [organizationId, twinId])).own;
  }

  /**
   * A page of the twin's positions as GeoJSON Point features (JSON text built by PostgreSQL), oldest first,
   * read as parts of FEATURES_PER_PART features (json-parts.ts): one text of a 10,000-feature page (2 MB)
   * cost Node a full collection of its heap per page.
   */
  async trackFeatures(organizationId: string, twinId: string, range: TrackRange): Promise<{ own: boolean; features: string; count: number; last: string | null }> {
    const p = new SqlParams();
    // Written as text, not json_build_object: a 10,000-feature page cost PostgreSQL 55 ms built as json
    // values and 24 ms concatenated; concat() writes each feature in one pass, where a chain of `||`
    // copies the growing text at every step. float8's text is its shortest exact form, valid JSON (finite, as read).
    const number = (column: string) => `coalesce(${column}::text, 'null')`;
    const feature = `concat('{"type":"Feature","geometry":{"type":"Point","coordinates":[', ST_X(t.location), ',', ST_Y(t.location),
                            ']},"properties":{"occurred":"', ${isoTimestampSql('t.occurred')}, '","accuracy":', ${number('t.accuracy')},
                            ',"speed":', ${number('t.speed')}, ',"heading":', ${number('t.heading')}, ',"altitude":', ${number('t.altitude')}, '}}')`;
    const rows = await this.sql.rows(TRACK_PARTS, this.pagePartsSql(p, organizationId, twinId, range, { part: feature }, FEATURES_PER_PART), p.values);
    return { own: rows[0].own, features: joinJsonParts(rows), count: rows[0].count, last: rows[0].last };
  }

  /**
   * A page of the twin's positions as one line (JSON text built by PostgreSQL): its coordinates and times
   * as the members of two JSON arrays, in `occurred` order, read as parts (json-parts.ts) as the points
   * are, and how many positions the page holds.
   */
  async trackLine(organizationId: string, twinId: string, range: TrackRange): Promise<{ own: boolean; coordinates: string; times: string; returned: number; count: number; last: string | null }> {
    const p = new SqlParams();
    const items = { coordinates: `concat('[', ST_X(t.location), ',', ST_Y(t.location), ']')`, times: `concat('"', ${isoTimestampSql('t.occurred')}, '"')` };
    const rows = await this.sql.rows(TRACK_LINE_PARTS, this.pagePartsSql(p, organizationId, twinId, range, items, VERTICES_PER_PART), p.values);
    const { own, count, last } = rows[0];
    return { own, coordinates: joinJsonPartsOf(rows, 'coordinates', '', ''), times: joinJsonPartsOf(rows, 'times', '', ''), returned: Math.min(count, range.size), count, last };
  }

  /** A page of the twin's positions as rows (to be drawn as a line), oldest first: `size` of them, and one more when more follow. */
  async trackRows(organizationId: string, twinId: string, range: TrackRange): Promise<TrackRow[]> {
    const p = new SqlParams();
    const page = this.pageSql(p, organizationId, twinId, range);
    return this.sql.rows(TRACK_ROW, `SELECT ST_X(p.location) AS lon, ST_Y(p.location) AS lat, p.occurred, p.accuracy, p.speed, p.heading, p.altitude FROM (${page}) p ORDER BY p.occurred`, p.values);
  }

  /**
   * A track page as parts (json-parts.ts): `own` (whether the organization has the twin), `count` (the
   * page's rows and one more when more follow), `last` (the page's last instant) on every row, and the
   * parts of `items` (JSON SQL of the position `t`) over the page's first `size` rows. The page is read
   * in `occurred` order as the index gives it (no Sort), numbered `n`.
   */
  private pagePartsSql(p: SqlParams, organizationId: string, twinId: string, range: TrackRange, items: Record<string, string>, perPart: number): string {
    const page = this.pageSql(p, organizationId, twinId, range);
    const size = p.add(range.size, '::int');
    return `WITH page AS MATERIALIZED (SELECT q.*, row_number() OVER (ORDER BY q.occurred) AS n FROM (${page}) q)
       SELECT EXISTS (SELECT 1 FROM twins t WHERE t.id = ${p.add(twinId, '::uuid')} AND t.organization_id = ${p.add(organizationId, '::uuid')}) AS own,
              (SELECT count(*) FROM page)::int AS count,
              (SELECT ${isoTimestampSql('max(k.occurred)')} FROM page k WHERE k.n <= ${size}) AS last,
              ${Object.keys(items).map((column) => `f.${column}`).join(', ')}, f.g::int AS g
         FROM (SELECT 1) one
         LEFT JOIN LATERAL (${jsonArraysPartsSql(items, `page t WHERE t.n <= ${size}`, perPart)}) f ON true`;
  }

  /** The twin's positions in range, in `occurred` order, one more than a page (whether more follow). */
  private pageSql(p: SqlParams, organizationId: string, twinId: string, range: TrackRange): string {
    const conditions = [`p.organization_id = ${p.add(organizationId, '::uuid')}`, `p.twin_id = ${p.add(twinId, '::uuid')}`];
    if (range.since !== undefined) conditions.push(`p.occurred >= ${p.add(range.since, '::timestamptz')}`);
    if (range.until !== undefined) conditions.push(`p.occurred < ${p.add(range.until, '::timestamptz')}`);
    if (range.after !== undefined) conditions.push(`p.occurred > ${p.add(range.after, '::timestamptz')}`);
    return `SELECT p.occurred, p.location, p.accuracy, p.speed, p.heading, p.altitude FROM positions p WHERE ${conditions.join(' AND ')}
             ORDER BY p.occurred LIMIT ${p.add(range.size + 1, '::int')}`;
  }
}
