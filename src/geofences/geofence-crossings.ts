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
 * The geofence crossings of a statement that moves twins: CTEs to follow the CTE `steps`, one row per new
 * location of a twin, with columns `organization_id`, `twin_id`, `occurred`, `location` (a point) and
 * `before` (where the twin was just before: null when it was nowhere). The twins must be locked by the
 * statement (FOR NO KEY UPDATE, or the UPDATE itself) before `before` was read from them, so two
 * statements moving one twin see each other's moves and never both record, nor both miss, a crossing.
 *
 * - `geofence_crossings`: each step against the organization's geofences as they are now, candidates
 *   found by one GiST lookup (`&&` of the box of both points: two lookups and a recheck cost 2-3 times
 *   more, bench/geofences.mjs), decided by `ST_Covers` (the boundary inside, a hole
 *   outside): a geofence covering the new point and not the one before is entered, the reverse exited.
 * - `geofence_events`: each crossing an event of the twin's timeline (`name` the crossing, category
 *   `geofence`, `occurred` the position's, `data` `{twin, geofence, coordinates}`), ids in the order of
 *   the twin and `occurred` (then the geofence id).
 * - `geofence_changes`: one change per crossing, its resource the event's JSON (no `event.created`), in
 *   that order, so a twin's crossings have increasing positions in `occurred` order.
 *
 * The statement's answer should read `geofence_changes` (to announce them): a data-modifying CTE nothing
 * reads runs after the main query, with the change-log locks then taken last.
 */
export function geofenceCrossingsSql(steps: string): string {
  return `geofence_crossings AS (
         SELECT s.organization_id, s.twin_id, s.occurred, s.location, g.id AS geofence_id, ST_Covers(g.geometry, s.location) AS entered,
                row_number() OVER (ORDER BY s.twin_id, s.occurred, g.id) AS seq
           FROM ${steps} s
           JOIN geofences g ON g.organization_id = s.organization_id AND g.geometry && ST_Collect(s.location, coalesce(s.before, s.location))
          WHERE ST_Covers(g.geometry, s.location) <> coalesce(ST_Covers(g.geometry, s.before), false)
       ), geofence_events AS (
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
