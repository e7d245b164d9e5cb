import { recordChangesSql } from '../database/change-log.js';
import { eventJsonSql } from '../events/event.resource.js';

/** The event names (and change kinds) of crossings; their category is `geofence`. */
export const GEOFENCE_ENTERED = 'geofence.entered';
export const GEOFENCE_EXITED = 'geofence.exited';

/**
 * A UUIDv7 (events/uuidv7.ts's layout) made in SQL: the statement's time in milliseconds, `seq` (from 1)
 * as the 12-bit counter, so a statement's ids sort in `seq` order, then 62 random bits (of a v4 UUID,
 * whose variant bits are already `10`).
 */
const uuidv7Sql = (seq: string) =>
  `encode(substring(int8send((extract(epoch FROM statement_timestamp()) * 1000)::bigint) FROM 3)
          || int2send((28672 + (${seq} % 4096))::smallint)
          || substring(uuid_send(gen_random_uuid()) FROM 9), 'hex')::uuid`;

/**
 * Consecutive points of a twin's path whose geofences are found by one lookup of the GiST index (the box
 * of those points), in a statement of at least PER_CHUNK_FROM points. One lookup per point cost a
 * 1,000-position batch ~8 ms with 1,000 geofences around, one per 32 points ~1 ms (bench/geofences.mjs);
 * each point is then tested only against its chunk's geofences whose box holds it. The chunked form
 * costs ~0.3 ms more a statement (its windows, hashes and materialized CTEs), which a move of one
 * position pays and a batch of ~24 positions or more wins back.
 */
const POINTS_PER_LOOKUP = 32;
export const PER_CHUNK_FROM = 24;

/**
 * A statement's crossings as an instance found them among the geofences it holds (geofence-index.ts's
 * HeldCrossings), as SQL: the statement's parameters holding them (`version` bigint; `firstOf`,
 * `firstTwin`, `firstGeofence`, `point`, `geofence` int4[] with positions from 1; `entered` boolean[];
 * `ids` uuid[]), and what only the statement knows:
 * - `twinOf`, `occurredOf`, `locationOf`: SQL of its position at an index (from 1);
 * - `allNew`: whether every position it was given is stored, each newer than where its twin was (so the
 *   paths found in memory are the twins' steps);
 * - `before`: rows `twin_id`, `location` of where each of its twins was before it (null: nowhere).
 */
export interface HeldCrossingsSql {
  version: string;
  firstOf: string;
  firstTwin: string;
  firstGeofence: string;
  point: string;
  geofence: string;
  entered: string;
  ids: string;
  twinOf: (index: string) => string;
  occurredOf: (index: string) => string;
  locationOf: (index: string) => string;
  allNew: string;
  before: string;
}

/**
 * How a statement finds its geofence crossings: per step, or per chunk of a path (for a statement whose
 * steps are all of one organization, `organization` its SQL), taking those an instance found when it holds
 * the organization's geofences (`held`) when they are current. All find the same crossings.
 */
export type CrossingLookup = { per: 'step' } | { per: 'chunk'; organization: string; held?: HeldCrossingsSql };
export const PER_STEP: CrossingLookup = { per: 'step' };

/** The lookup of a statement of `points` new positions of `organization`: per step below PER_CHUNK_FROM points, per chunk from there. */
export const crossingLookupFor = (points: number, organization: string, held?: HeldCrossingsSql): CrossingLookup =>
  points >= PER_CHUNK_FROM ? { per: 'chunk', organization, held } : PER_STEP;

/**
 * The CTE `geofence_crossings` (columns `organization_id`, `twin_id`, `occurred`, `location`,
 * `geofence_id`, `entered`, `seq`) looked up per step: each step against the organization's geofences,
 * candidates found by one GiST lookup (`&&` of the box of both points: two lookups and a recheck cost 2-3
 * times more), decided by `ST_Covers`: a geofence covering the new point and not the one before is
 * entered, the reverse exited.
 */
const crossingsPerStepSql = (steps: string) => `geofence_crossings AS (
         SELECT s.organization_id, s.twin_id, s.occurred, s.location, g.id AS geofence_id, ST_Covers(g.geometry, s.location) AS entered,
                row_number() OVER (ORDER BY s.twin_id, s.occurred, g.id) AS seq
           FROM ${steps} s
           JOIN geofences g ON g.organization_id = s.organization_id AND g.geometry && ST_Collect(s.location, coalesce(s.before, s.location))
          WHERE ST_Covers(g.geometry, s.location) <> coalesce(ST_Covers(g.geometry, s.before), false)
       `;

/**
 * The CTE `geofence_searched` (the columns of `geofence_crossings` but `seq`) looked up per chunk of a
 * path, for a statement whose steps are all of the organization `organization` (SQL):
 * - `geofence_points`: each twin's path, numbered: `before` (n = 0, when there is one), then its steps
 *   (n = 1, 2, … in `occurred` order). None when the organization has no geofence: one probe of the
 *   index instead of numbering and chunking a path that can cross nothing (~1.5 ms of PostgreSQL a
 *   batch of 1,000, most organizations' case; bench/fleet.mjs).
 * - `geofence_candidates`: the organization's geofences whose box meets the box of a chunk of
 *   POINTS_PER_LOOKUP consecutive points.
 * - `geofence_insides`: each point and each geofence of its chunk that covers it, decided once per point
 *   and geofence.
 * - `geofence_searched`: where a run of consecutive points inside a geofence starts (entered at its first
 *   point, unless that is `before`) and ends (exited at the point after its last, when the path goes on).
 *   `unless` (SQL), when given, skips the search whole when it holds.
 */
const crossingsPerChunkSql = (steps: string, organization: string, unless?: string) => `geofence_points AS MATERIALIZED (
         SELECT s.organization_id, s.twin_id, p.n, p.location, s.occurred, s.last
           FROM (SELECT s.*, row_number() OVER w AS n, count(*) OVER (PARTITION BY s.twin_id) AS last
                   FROM ${steps} s WINDOW w AS (PARTITION BY s.twin_id ORDER BY s.occurred)) s
          CROSS JOIN LATERAL (VALUES (s.n, s.location), (0, CASE WHEN s.n = 1 THEN s.before END)) p(n, location)
          WHERE p.location IS NOT NULL AND EXISTS (SELECT 1 FROM geofences g WHERE g.organization_id = ${organization})
       ), geofence_candidates AS MATERIALIZED (
         SELECT c.twin_id, c.chunk, g.id AS geofence_id, g.geometry
           FROM (SELECT p.organization_id, p.twin_id, p.n / ${POINTS_PER_LOOKUP} AS chunk, ST_SetSRID(ST_Extent(p.location)::geometry, 4326) AS box
                   FROM geofence_points p GROUP BY p.organization_id, p.twin_id, p.n / ${POINTS_PER_LOOKUP}) c
          -- OFFSET 0 keeps this a lookup of the index per chunk (the planner would rather join all geofences).
          CROSS JOIN LATERAL (SELECT g.id, g.geometry FROM geofences g WHERE g.organization_id = c.organization_id AND g.geometry && c.box OFFSET 0) g
       ), geofence_insides AS MATERIALIZED (
         SELECT p.twin_id, p.n, p.last, g.geofence_id
           FROM geofence_points p
           JOIN geofence_candidates g ON g.twin_id = p.twin_id AND g.chunk = p.n / ${POINTS_PER_LOOKUP} AND g.geometry && p.location
          WHERE ST_Covers(g.geometry, p.location)
       ), geofence_runs AS (
         SELECT i.twin_id, i.geofence_id, i.n, i.last, lag(i.n) OVER w AS previous, lead(i.n) OVER w AS next
           FROM geofence_insides i WINDOW w AS (PARTITION BY i.twin_id, i.geofence_id ORDER BY i.n)
       ), geofence_searched AS (
         SELECT p.organization_id, p.twin_id, p.occurred, p.location, x.geofence_id, x.entered
           FROM (SELECT r.twin_id, r.geofence_id, r.n, true AS entered FROM geofence_runs r WHERE r.n > 0 AND r.previous IS DISTINCT FROM r.n - 1
                 UNION ALL
                 SELECT r.twin_id, r.geofence_id, r.n + 1, false FROM geofence_runs r WHERE r.n < r.last AND r.next IS DISTINCT FROM r.n + 1) x
           JOIN geofence_points p ON p.twin_id = x.twin_id AND p.n = x.n${unless ? `
          WHERE NOT (${unless})` : ''}
       `;

/**
 * The CTEs of crossings an instance found (`held`, HeldCrossingsSql), for a statement of the organization
 * `organization` (SQL):
 * - `geofence_held`: whether they are current: found among the geofences at the version this statement
 *   sees (geofence_sets), and every position new.
 * - `geofence_firsts`: each twin's earliest position against where it was (`before`, the one point
 *   PostgreSQL looks up here): entered the geofences covering it and not `before`, exited the reverse.
 * - `geofence_found`: those crossings and the ones after each twin's earliest position.
 */
const heldCrossingsSql = (held: HeldCrossingsSql, organization: string) => `geofence_held AS MATERIALIZED (
         SELECT coalesce((SELECT s.version FROM geofence_sets s WHERE s.organization_id = ${organization}) = ${held.version}, false) AND ${held.allNew} AS current
       ), geofence_firsts AS (
         SELECT coalesce(n.point, w.point) AS point, coalesce(n.geofence_id, w.geofence_id) AS geofence_id, n.point IS NOT NULL AS entered
           FROM (SELECT t.point, (${held.ids})[f.geofence] AS geofence_id
                   FROM unnest(${held.firstTwin}, ${held.firstGeofence}) f(twin, geofence) JOIN unnest(${held.firstOf}) WITH ORDINALITY t(point, twin) ON t.twin = f.twin) n
           FULL JOIN (SELECT t.point, g.id AS geofence_id
                        FROM unnest(${held.firstOf}) t(point)
                        JOIN ${held.before} b ON b.twin_id = ${held.twinOf('t.point')}
                        JOIN geofences g ON g.organization_id = ${organization} AND g.geometry && b.location AND ST_Covers(g.geometry, b.location)) w
             ON w.point = n.point AND w.geofence_id = n.geofence_id
          WHERE n.point IS NULL OR w.point IS NULL
       ), geofence_found AS (
         SELECT ${organization} AS organization_id, ${held.twinOf('x.point')} AS twin_id, ${held.occurredOf('x.point')} AS occurred, ${held.locationOf('x.point')} AS location,
                x.geofence_id, x.entered
           FROM (SELECT x.point, (${held.ids})[x.geofence] AS geofence_id, x.entered FROM unnest(${held.point}, ${held.geofence}, ${held.entered}) x(point, geofence, entered)
                 UNION ALL
                 SELECT f.point, f.geofence_id, f.entered FROM geofence_firsts f) x
          WHERE (SELECT h.current FROM geofence_held h)
       `;

/** `geofence_crossings` of the chunked lookup: the crossings found (held or searched), numbered. */
const crossingsOfChunksSql = (steps: string, organization: string, held?: HeldCrossingsSql) => {
  const numbered = (from: string) => `geofence_crossings AS (
         SELECT c.*, row_number() OVER (ORDER BY c.twin_id, c.occurred, c.geofence_id) AS seq FROM (${from}) c
       `;
  if (!held) return `${crossingsPerChunkSql(steps, organization)}), ${numbered('SELECT * FROM geofence_searched')}`;
  return `${heldCrossingsSql(held, organization)}), ${crossingsPerChunkSql(steps, organization, 'SELECT h.current FROM geofence_held h')}), ${numbered('SELECT * FROM geofence_found UNION ALL SELECT * FROM geofence_searched')}`;
};

/**
 * The geofence crossings of a statement that moves twins: CTEs to follow the CTE `steps`, one row per new
 * location of a twin, with columns `organization_id`, `twin_id`, `occurred`, `location` (a point) and
 * `before` (where the twin was just before the step: null when it was nowhere; each step after a twin's
 * first starts where the one before it ended). The twins must be locked by the statement (FOR NO KEY
 * UPDATE, or the UPDATE itself) before `before` was read from them, so two statements moving one twin see
 * each other's moves and never both record, nor both miss, a crossing.
 *
 * - `geofence_crossings` (per step or per chunk, `lookup`: crossingLookupFor): against the
 *   organization's geofences as they are now; `ST_Covers` decides (the boundary inside, a hole outside).
 * - `geofence_events`: each crossing an event of the twin's timeline (`name` the crossing, category
 *   `geofence`, `occurred` the position's, `data` `{twin, geofence, coordinates}`), ids in the order of
 *   the twin and `occurred` (then the geofence id).
 * - `geofence_changes`: one change per crossing, its resource the event's JSON (no `event.created`), in
 *   that order, so a twin's crossings have increasing positions in `occurred` order. `oneTwin` (SQL: the
 *   id of the only twin the statement moves) has them drawn under that twin's change-log lock taken once
 *   (recordChangesSql's `positionsOf`), not by the table's trigger row by row (a batch of 1,000
 *   positions of one twin records ~90 crossings among 1,000 geofences, bench/geofences.mjs).
 *
 * The statement's answer should read `geofence_changes` (to announce them): a data-modifying CTE nothing
 * reads runs after the main query, with the change-log locks then taken last.
 */
export function geofenceCrossingsSql(steps: string, lookup: CrossingLookup, oneTwin?: string): string {
  return `${lookup.per === 'chunk' ? crossingsOfChunksSql(steps, lookup.organization, lookup.held) : crossingsPerStepSql(steps)}), geofence_events AS (
         INSERT INTO events (id, organization_id, twin_id, name, category, data, occurred)
         SELECT ${uuidv7Sql('x.seq')}, x.organization_id, x.twin_id,
                CASE WHEN x.entered THEN '${GEOFENCE_ENTERED}' ELSE '${GEOFENCE_EXITED}' END, 'geofence',
                jsonb_build_object('twin', x.twin_id, 'geofence', x.geofence_id, 'coordinates', jsonb_build_array(ST_X(x.location), ST_Y(x.location))),
                x.occurred
           FROM geofence_crossings x
          ORDER BY x.seq
         RETURNING *
       ), geofence_changes AS (${recordChangesSql({
         kind: GEOFENCE_ENTERED,
         kindSql: 'e.name',
         from: 'geofence_events e ORDER BY e.twin_id, e.id',
         organization: 'e.organization_id',
         twin: 'e.twin_id',
         subject: 'e.id',
         name: 'e.name',
         category: 'e.category',
         resource: `${eventJsonSql('e')}::text`,
         positionsOf: oneTwin,
       })})`;
}

/**
 * The crossings a statement recorded for the twin `twin` (SQL), as a JSON array text of change rows in
 * position order (null when none), for the bus that announces after commit; NULL when the bus has a
 * channel (`channel`: the statement announces them itself, and ~400 bytes a crossing would go unread).
 */
export const crossingChangesJsonSql = (twin: string, channel: string | null): string =>
  channel !== null
    ? 'NULL::text'
    : `(SELECT json_agg(json_build_object('position', gc.position::text, 'kind', gc.kind, 'twin_id', gc.twin_id, 'subject_id', gc.subject_id,
                                      'name', gc.name, 'category', gc.category, 'resource', gc.resource) ORDER BY gc.position)::text
      FROM geofence_changes gc WHERE gc.twin_id = ${twin})`;
