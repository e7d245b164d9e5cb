// The raw baseline: the fastest server for the benchmarked routes we could write by hand, the yardstick
// the service is measured against. It shares NO code with the service (nothing from src/ or dist/):
// plain Fastify + pg + node builtins, its own SQL over the same schema (db/migrations), so any waste in
// the service's repositories, mappers or framework layers shows up as a ratio below 1.
//
// How it is fast, and why each is fair game for the service too:
// - one round trip per request: authentication (token hash, revoked/expired, membership of
//   X-Organization, X-Twin in that organization) is a CTE of the very statement that answers, and so
//   is the page count (from the trigger-kept twin_counts where that is exact);
// - named prepared statements (pg's {name, text, values}) for every statement: parsed and planned once
//   per connection (page sizes, offsets, keyset positions and the timeline's twin as scalar subqueries
//   in the timeline, keyset and unfiltered twin list pages, as in the service, so PostgreSQL keeps their
//   generic plan instead of planning every execution again);
// - JSON built by PostgreSQL (json_build_object / json_agg … ::text) and sent as a string, never parsed
//   in Node; Node only splices the small links/meta around it;
// - long pages (a provider's list, the map and distance listings, 330 kB) come as rows of ~32 kB parts
//   that Node joins: pg assembles a long row in a buffer it doubles, memory outside V8's heap whose
//   growth starts full garbage collections (PARTS below);
// - writes (POST/PATCH events, embark) are single statements with data-modifying CTEs, including the
//   pg_notify the service's event stream relies on, made (as the service's) only for a twin someone
//   streams (the schema's `twin_is_streamed`: a NOTIFY makes every notifying commit wait in one queue).
// Input validation of request documents is real (same limits as the service); error answers are
// JSON:API errors but need not match the service's word for word.
//
//   DATABASE_URL=… PORT=… node bench/raw-server.mjs
import { createHash, createHmac, randomFillSync, randomUUID, timingSafeEqual } from 'node:crypto';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';

const require = createRequire(join(dirname(fileURLToPath(import.meta.url)), '../package.json'));

// The same heap growth as the service (its HEAP_GROWING_PERCENT, same default): as with the heap bounds
// of NODE_OPTIONS, the comparison is about the layers, not the collector's settings.
const heapGrowingPercent = Number(process.env.HEAP_GROWING_PERCENT ?? 50);
if (heapGrowingPercent > 0) setFlagsFromString(`--heap-growing-percent=${heapGrowingPercent}`);
const Fastify = require('fastify');
const { Pool } = require('pg');

const pool = new Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
  application_name: 'twin-bench-raw',
  options: '-c TimeZone=UTC',
});

// As the service labels them (no charset: JSON defines none); Fastify appends one to JSON text, the
// onSend hook takes it off again, as the service's does.
const JSON_API = 'application/vnd.api+json';
const GEO_JSON = 'application/geo+json';
const APPENDED_CHARSET = '; charset=utf-8';
const PAGE = { defaultSize: 50, maxSize: 100 };
const GEO_PAGE = { defaultSize: 1000, maxSize: 10000 };
const MAX_EVENT_DATA_BYTES = 64 * 1024;
const NOTIFY_CHANNEL = 'twin_events';
const NOTIFY_PAYLOAD_MAX = 7600;

// ---------------------------------------------------------------------------------------------------
// SQL building blocks

/** Microsecond UTC ISO 8601, as the service writes timestamps. */
const ts = (column) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * The caller, in the statement that answers: $1 token hash, $2 X-Organization, $3 X-Twin. No row: the
 * token is unknown, revoked or expired (401); org NULL: not a member (403); twin NULL: not one of its twins.
 */
const AUTH = `a AS (
  SELECT m.organization_id AS org, tw.id AS twin, k.account_id AS account
    FROM access_tokens k
    LEFT JOIN memberships m ON m.account_id = k.account_id AND m.organization_id = $2::uuid
    LEFT JOIN twins tw ON tw.id = $3::uuid AND tw.organization_id = m.organization_id
   WHERE k.token_hash = $1::bytea AND k.revoked IS NULL AND (k.expires IS NULL OR k.expires > now()))`;

/** Visible to every organization; the predicate of the partial indexes twins_(un)shared_created_idx. */
const SHARED = (t) => `(${t}.public OR cardinality(${t}.services) > 0)`;
const VISIBLE = (t) => `(${SHARED(t)} OR ${t}.organization_id = $2::uuid)`;

const ORGANIZATION_REL = (t) => `json_build_object('organization', json_build_object('data', json_build_object('type', 'organizations', 'id', ${t}.organization_id)))`;

const TWIN_LIST_JSON = `json_build_object('type', 'twins', 'id', t.id, 'attributes', json_build_object(
    'created', ${ts('t.created')}, 'modified', ${ts('t.modified')}, 'name', t.name, 'description', t.description,
    'personal', t.personal, 'connections', t.connections,
    'personality', json_build_object('id', t.personality_id, 'characteristics', t.characteristics, 'services', t.services),
    'meta-data', t.meta_data, 'place-id', coalesce(t.place_id, ''), 'provider', t.provider, 'location', ST_AsGeoJSON(t.location)::json,
    'opening-hours', t.opening_hours, 'phone-number', t.phone_number, 'address', t.address, 'city', t.city, 'state', t.state,
    'website', t.website, 'provider-info', t.provider_info),
  'relationships', ${ORGANIZATION_REL('t')})`;

const TWIN_OWN_JSON = `json_build_object('type', 'twins', 'id', t.id, 'attributes', json_build_object(
    'created', ${ts('t.created')}, 'modified', ${ts('t.modified')}, 'name', t.name, 'description', t.description,
    'personal', t.personal, 'connections', t.connections,
    'personality', json_build_object('id', t.personality_id, 'characteristics', t.characteristics, 'services', t.services),
    'meta-data', t.meta_data),
  'relationships', ${ORGANIZATION_REL('t')})`;

/** The detail form: underscored names, opening_hours as its weekday_text lines. */
const TWIN_DETAIL_JSON = `json_build_object('type', 'twins', 'id', t.id, 'attributes', json_build_object(
    'created', ${ts('t.created')}, 'modified', ${ts('t.modified')}, 'name', t.name, 'description', t.description,
    'tasks_supplied', t.tasks_supplied, 'personal', t.personal, 'meta_data', t.meta_data, 'place_id', coalesce(t.place_id, ''),
    'provider', t.provider, 'location', ST_AsGeoJSON(t.location)::json,
    'opening_hours', CASE WHEN jsonb_typeof(t.opening_hours -> 'weekday_text') = 'array'
      THEN coalesce((SELECT jsonb_agg(w ORDER BY n) FROM jsonb_array_elements(t.opening_hours -> 'weekday_text') WITH ORDINALITY x(w, n)
                      WHERE jsonb_typeof(w) = 'string'), '[]') ELSE '[]' END,
    'phone_number', t.phone_number, 'address', t.address, 'city', t.city, 'state', t.state, 'website', t.website,
    'provider_info', t.provider_info, 'tags', t.tags),
  'relationships', ${ORGANIZATION_REL('t')})`;

const EVENT_JSON = `json_build_object('type', 'events', 'id', e.id, 'attributes', json_build_object(
    'name', e.name, 'category', e.category, 'data', e.data, 'timestamp', ${ts('e."timestamp"')}, 'occurred', ${ts('e.occurred')}))`;

/**
 * The change row of a written event `e` (a CTE `c`: the change log the service's event stream resumes from
 * and its webhooks are delivered from, positions drawn by the table's trigger) and its pg_notify (select
 * list part), in the payload the service's event stream expects.
 */
const CHANGE = (kind) => `c AS (INSERT INTO changes (organization_id, twin_id, kind, subject_id, name, category, resource)
      SELECT e.organization_id, e.twin_id, '${kind}', e.id, e.name, e.category, ${EVENT_JSON}::text FROM e
      RETURNING position, kind, twin_id, subject_id, name, category, resource)`;
const NOTIFY = `CASE WHEN twin_is_streamed(c.twin_id) THEN pg_notify('${NOTIFY_CHANNEL}', json_build_object('position', c.position::text, 'kind', c.kind, 'twin_id', c.twin_id, 'subject_id', c.subject_id,
    'name', c.name, 'category', c.category, 'resource', CASE WHEN octet_length(c.resource) <= ${NOTIFY_PAYLOAD_MAX} THEN c.resource END)::text) END`;

/**
 * The full form of a quest `q` whose twin is `t` and whose original's twin is `ot` (may be NULL);
 * `images` is the absolute URL prefix of image content ($n text), `tasks` the task count expression.
 */
const questJson = (images, tasks) => `json_build_object('type', 'quests', 'id', q.id, 'attributes', json_build_object(
    'created', ${ts('q.created')}, 'modified', ${ts('q.modified')}, 'name', q.name, 'summary', q.summary, 'description', q.description,
    'summary-image-url', ${images} || '/images/' || q.summary_image_id || '/content', 'public', q.public, 'price', q.price,
    'twin-metadata', json_build_object('id', t.id, 'name', t.name, 'description', t.description),
    'original-twin-metadata', CASE WHEN ot.id IS NOT NULL THEN json_build_object('id', ot.id, 'name', ot.name, 'description', ot.description) END,
    'task-count', ${tasks}),
  'relationships', json_build_object(
    'images', CASE WHEN q.summary_image_id IS NULL THEN '{"data":[],"meta":{"count":0}}'::json
      ELSE json_build_object('data', json_build_array(json_build_object('type', 'images', 'id', q.summary_image_id)), 'meta', json_build_object('count', 1)) END,
    'summary-image', json_build_object('data', CASE WHEN q.summary_image_id IS NOT NULL THEN json_build_object('type', 'images', 'id', q.summary_image_id) END),
    'twin', json_build_object('data', json_build_object('type', 'twins', 'id', q.twin_id)),
    'original', json_build_object('data', CASE WHEN q.original_id IS NOT NULL THEN json_build_object('type', 'quests', 'id', q.original_id) END)))`;

// ---------------------------------------------------------------------------------------------------
// Statements ($1 token hash, $2 organization, $3 twin in every one)

/** GET /twins/<id>/ — $4 twin id. */
const TWIN_ETAG = `'"' || (extract(epoch FROM t.modified) * 1000000)::bigint || '.' || t.tasks_supplied || '"'`;
const SQL_TWIN_DETAIL = `WITH ${AUTH}
SELECT a.org, a.twin, d.body, d.etag
  FROM a LEFT JOIN LATERAL (SELECT ${TWIN_DETAIL_JSON}::text AS body, ${TWIN_ETAG} AS etag
                              FROM twins t WHERE a.org IS NOT NULL AND t.id = $4::uuid AND ${VISIBLE('t')}) d ON true`;

/** A conditional GET of a twin: its version alone (the entity tag), without building the document. */
const SQL_TWIN_ETAG = `WITH ${AUTH}
SELECT a.org, a.twin, (SELECT ${TWIN_ETAG} FROM twins t WHERE a.org IS NOT NULL AND t.id = $4::uuid AND ${VISIBLE('t')}) AS etag
  FROM a`;

/**
 * The JSON array of `item` over the rows `from` (aliased t, numbered t.n consecutively) as rows `part`
 * of `perPart` items (joined by commas) with their place `g`; no rows for no items. One 330 kB row makes
 * pg grow its parse buffer 64 → 512 kB (memory outside V8's heap, whose growth starts full
 * collections); ~32 kB rows fit its 64 kB socket reads. `answerParts` joins them in order. Grouped by
 * count: a running byte count (a window) doubled PostgreSQL's time for a 50-twin page.
 */
const PARTS = (item, from, perPart) => `SELECT string_agg((${item})::text, ',' ORDER BY t.n) AS part, (t.n - 1) / ${perPart} AS g
  FROM ${from}
 GROUP BY (t.n - 1) / ${perPart}`;
/** Items a part: twins in list form (1–8 kB) by eight, map features (~340 bytes) by 100. */
const TWINS_PER_PART = 8;
const FEATURES_PER_PART = 100;

/** The count (twin_counts) of the visible twins: every organization's shared ones plus the caller's others. */
const VISIBLE_COUNT = `((SELECT coalesce(sum(c.shared), 0) FROM twin_counts c)
   + coalesce((SELECT c.total - c.shared FROM twin_counts c WHERE c.organization_id = $2::uuid), 0))::int`;

/**
 * GET /twins/ without filters — $4 size, $5 offset. The page is a merge of two index-only scans in list
 * order (shared twins; the caller's other twins), then only the page's rows are read.
 */
const SQL_TWINS_PAGE = `WITH ${AUTH}
SELECT a.org, a.twin, CASE WHEN a.org IS NOT NULL THEN ${VISIBLE_COUNT} END AS count,
       CASE WHEN a.org IS NOT NULL THEN
         (SELECT json_agg(${TWIN_LIST_JSON} ORDER BY p.created, p.id)::text
            FROM (SELECT u.id, u.created FROM (
                    (SELECT s.id, s.created FROM twins s WHERE ${SHARED('s')} ORDER BY s.created, s.id LIMIT (SELECT $4::int + $5::bigint))
                    UNION ALL
                    (SELECT s.id, s.created FROM twins s WHERE s.organization_id = $2::uuid AND NOT ${SHARED('s')}
                      ORDER BY s.created, s.id LIMIT (SELECT $4::int + $5::bigint))) u
                  ORDER BY u.created, u.id LIMIT (SELECT $4::int) OFFSET (SELECT $5::bigint)) p
            JOIN twins t ON t.id = p.id) END AS body
  FROM a`;

/**
 * GET /twins/?organization=<org> alone — $4 organization, $5 size, $6 offset. The caller's own
 * organization: all its twins (count: its total); another one: its shared twins (count: its shared).
 */
const SQL_TWINS_OF_ORGANIZATION = `WITH ${AUTH},
p AS (SELECT s.id, row_number() OVER (ORDER BY s.created, s.id) AS n FROM twins s
       WHERE (SELECT a.org FROM a) IS NOT NULL AND s.organization_id = $4::uuid AND ($4::uuid = $2::uuid OR ${SHARED('s')})
       ORDER BY s.created, s.id LIMIT (SELECT $5::int) OFFSET (SELECT $6::bigint))
SELECT a.org, a.twin,
       CASE WHEN a.org IS NOT NULL THEN coalesce((SELECT CASE WHEN $4::uuid = $2::uuid THEN c.total ELSE c.shared END
                                                  FROM twin_counts c WHERE c.organization_id = $4::uuid), 0)::int END AS count,
       b.part, b.g::int AS g
  FROM a LEFT JOIN LATERAL (${PARTS(TWIN_LIST_JSON, '(SELECT t.*, p.n FROM p JOIN twins t ON t.id = p.id) t', TWINS_PER_PART)}) b ON a.org IS NOT NULL
`;

/** GET /my/twins/ without filters — $4 size, $5 offset; count: the organization's total. */
const SQL_MY_TWINS_PAGE = `WITH ${AUTH}
SELECT a.org, a.twin,
       CASE WHEN a.org IS NOT NULL THEN coalesce((SELECT c.total FROM twin_counts c WHERE c.organization_id = $2::uuid), 0)::int END AS count,
       CASE WHEN a.org IS NOT NULL THEN
         (SELECT json_agg(${TWIN_OWN_JSON} ORDER BY p.created, p.id)::text
            FROM (SELECT s.id, s.created FROM twins s WHERE s.organization_id = $2::uuid
                   ORDER BY s.created, s.id LIMIT (SELECT $4::int) OFFSET (SELECT $5::bigint)) p
            JOIN twins t ON t.id = p.id) END AS body
  FROM a`;

/**
 * A filtered twin list (JSON:API page or geo FeatureCollection): count and page of `where`, in one
 * statement. A page that holds some rows but fewer than `size` is the last one, so it is its own count
 * (offset + rows) and `count(*)` of the filter runs only for full or empty pages.
 */
function filteredTwinsSql({ where, orderBy, size, offset }, form) {
  const columns = form === 'geo' ? 't.id, t.location, t.name, t.description' : 't.*';
  const page = `SELECT ${columns}, row_number() OVER (ORDER BY ${orderBy}) AS n FROM twins t
                 WHERE (SELECT a.org FROM a) IS NOT NULL AND ${where} ORDER BY ${orderBy} LIMIT ${size} OFFSET ${offset}`;
  const item =
    form === 'geo'
      ? `json_build_object('id', t.id::text, 'type', 'Feature', 'geometry', ST_AsGeoJSON(t.location)::json,
            'properties', json_build_object('twin_id', t.id::text, 'name', t.name, 'description', t.description))`
      : form === 'own' ? TWIN_OWN_JSON : TWIN_LIST_JSON;
  return `WITH ${AUTH}, p AS MATERIALIZED (${page})
SELECT a.org, a.twin, c.count, b.part, b.g::int AS g
  FROM a CROSS JOIN LATERAL (SELECT CASE WHEN a.org IS NULL THEN NULL
                               WHEN r.rows > 0 AND r.rows < ${size} THEN (${offset} + r.rows)::int
                               ELSE (SELECT count(*)::int FROM twins t WHERE ${where}) END AS count
                     FROM (SELECT count(*) AS rows FROM p) r) c
  LEFT JOIN LATERAL (${PARTS(item, 'p t', form === 'geo' ? FEATURES_PER_PART : TWINS_PER_PART)}) b ON a.org IS NOT NULL
`;
}

/** POST /events/ — $4 id, $5 name, $6 category, $7 data. Inserts only for a known twin of a member organization. */
const SQL_EVENT_INSERT = `WITH ${AUTH},
e AS (INSERT INTO events (id, organization_id, twin_id, name, category, data)
      SELECT $4::uuid, a.org, a.twin, $5::varchar, $6::varchar, $7::jsonb FROM a WHERE a.twin IS NOT NULL
      RETURNING *),
${CHANGE('event.created')}
SELECT a.org, a.twin, w.body
  FROM a LEFT JOIN LATERAL (SELECT c.resource AS body, ${NOTIFY} FROM c) w ON true`;

/** The merged data of a PATCH of row `e`: keys set, keys the patch ($7) sets to null removed. */
const MERGED_DATA = `(e.data || $7::jsonb) - ARRAY(SELECT key FROM jsonb_each($7::jsonb) WHERE value = 'null'::jsonb)`;

/**
 * PATCH /events/<id>/ — $4 id, $5 name, $6 category, $7 data patch. The merge reads the row being
 * updated (concurrent patches of other keys are kept). The merged data must fit 64 KiB compact; its
 * jsonb text (with spaces) is never shorter, so when that fits the update goes through here, and only
 * a merge larger than that in jsonb text takes the exact path (SQL_EVENT_UPDATE_EXACT).
 */
const SQL_EVENT_UPDATE = `WITH ${AUTH},
e AS (UPDATE events e SET name = coalesce($5::varchar, e.name), category = coalesce($6::varchar, e.category), data = ${MERGED_DATA}, modified = now()
        FROM a WHERE e.id = $4::uuid AND e.twin_id = a.twin AND e.organization_id = a.org
         AND octet_length((${MERGED_DATA})::text) <= ${MAX_EVENT_DATA_BYTES}
      RETURNING e.*),
${CHANGE('event.updated')}
SELECT a.org, a.twin, w.body,
       CASE WHEN w.body IS NOT NULL THEN 1
            ELSE (SELECT count(*) FROM events v WHERE v.id = $4::uuid AND v.twin_id = a.twin AND v.organization_id = a.org) END::int AS found
  FROM a LEFT JOIN LATERAL (SELECT c.resource AS body, ${NOTIFY} FROM c) w ON true`;

/** The exact path of a big merge, in a transaction: update, measure the compact JSON in Node, commit or roll back. */
const SQL_EVENT_UPDATE_EXACT = `WITH ${AUTH},
e AS (UPDATE events e SET name = coalesce($5::varchar, e.name), category = coalesce($6::varchar, e.category),
             data = ${MERGED_DATA}, modified = now()
        FROM a WHERE e.id = $4::uuid AND e.twin_id = a.twin AND e.organization_id = a.org
      RETURNING e.*),
${CHANGE('event.updated')}
SELECT w.body, w.data FROM (SELECT c.resource AS body, e.data::text AS data, ${NOTIFY} FROM e JOIN c ON c.subject_id = e.id) w`;

/** GET /events/ — $4 name, $5 category, $6 since, $7 until (each NULL when absent), $8 size, $9 offset. */
const TIMELINE_WHERE = `e.twin_id = (SELECT $3::uuid) AND e.organization_id = (SELECT $2::uuid)
   AND ($4::text IS NULL OR e.name = $4::text) AND ($5::text IS NULL OR e.category = $5::text)
   AND e."timestamp" >= coalesce($6::timestamptz, '-infinity') AND e."timestamp" < coalesce($7::timestamptz, 'infinity')`;
const SQL_TIMELINE = `WITH ${AUTH}
SELECT a.org, a.twin,
       CASE WHEN a.twin IS NULL THEN NULL
            WHEN $4::text IS NULL AND $5::text IS NULL AND $6::timestamptz IS NULL AND $7::timestamptz IS NULL
            THEN coalesce((SELECT n.total::int FROM twin_event_counts n WHERE n.organization_id = $2::uuid AND n.twin_id = $3::uuid), 0)
            ELSE (SELECT count(*)::int FROM events e WHERE ${TIMELINE_WHERE}) END AS count,
       CASE WHEN a.twin IS NOT NULL THEN
         (SELECT json_agg(${EVENT_JSON} ORDER BY e."timestamp" DESC, e.id DESC)::text
            FROM (SELECT * FROM events e WHERE ${TIMELINE_WHERE} ORDER BY e."timestamp" DESC, e.id DESC LIMIT (SELECT $8::int) OFFSET (SELECT $9::bigint)) e) END AS body
  FROM a`;

/**
 * GET /quests/ — the discovery feed for the filters given (`present`: owned_by, name, description, in
 * that order), numbered from $4, then the page's size, offset and image URL prefix. One statement per
 * combination of filters, as the service builds its WHERE from the filters present, and the page's size
 * and offset as scalar subqueries. One statement with a catch-all `($n IS NULL OR …)` per filter and its
 * LIMIT and OFFSET in sight of the planner was planned again on every execution, and cost PostgreSQL
 * 7.1–7.8 ms a page where the service's cost 4.6–5.2 (`bench/cpu-per-request.mjs --only feed`, the
 * unfiltered feed on the million twins): a baseline slower than a hand-written server need be. The
 * visibility of a quest's twin is read off the quest (`listed`: public and of a shared twin, kept by the
 * schema's triggers), so neither the count nor the page joins the twins to filter.
 */
function discoveryFeed(present) {
  let n = 3;
  const next = () => `$${++n}`;
  const conditions = [`q.public AND (q.listed OR q.organization_id = $2::uuid)`];
  if (present[0]) conditions.push(`q.twin_id = ${next()}::uuid`);
  if (present[1]) conditions.push(`strpos(lower(q.name), lower(${next()}::text)) > 0`);
  if (present[2]) conditions.push(`strpos(lower(q.description), lower(${next()}::text)) > 0`);
  return { where: conditions.join(' AND '), size: `(SELECT ${next()}::int)`, offset: `(SELECT ${next()}::bigint)`, prefix: `${next()}::text`, key: present.map((p) => (p ? '1' : '0')).join('') };
}
const questFeedSql = ({ where, size, offset, prefix }) => `WITH ${AUTH}
SELECT a.org, a.twin,
       CASE WHEN a.twin IS NOT NULL THEN (SELECT count(*)::int FROM quests q WHERE ${where}) END AS count,
       CASE WHEN a.twin IS NOT NULL THEN
         (SELECT json_agg(${questJson(prefix, '(SELECT count(*) FROM quest_tasks k WHERE k.quest_id = q.id)')} ORDER BY q.created DESC, q.id DESC)::text
            FROM (SELECT q.* FROM quests q WHERE ${where}
                   ORDER BY q.created DESC, q.id DESC LIMIT ${size} OFFSET ${offset}) q
            JOIN twins t ON t.id = q.twin_id
            LEFT JOIN quests o ON o.id = q.original_id
            LEFT JOIN twins ot ON ot.id = o.twin_id) END AS body
  FROM a`;

/**
 * Keyset pages (page_after): the rows past a position in list order, one more than the page to know
 * whether more follow, the page's JSON, its edge positions, and whether rows lie at or before the
 * position (for links.prev). Positions travel as text and are cast back exactly.
 */
const keysetSelect = (json, alias, size, position) => `
SELECT a.org, a.twin,
       CASE WHEN a.org IS NOT NULL THEN (SELECT coalesce(json_agg(${json} ORDER BY ${alias}.n), '[]'::json)::text FROM page ${alias} WHERE ${alias}.n <= ${size}) END AS body,
       (SELECT ${position} FROM page ${alias} WHERE ${alias}.n = 1) AS first,
       (SELECT ${position} FROM page ${alias} WHERE ${alias}.n = least(${size}, (SELECT count(*) FROM page))) AS last,
       (SELECT count(*) FROM page) > ${size} AS more`;

/** GET /events/?page_after= — $4 size; with a position, $5 timestamp and $6 id. Newest first. */
const timelinePage = (after) => `WITH ${AUTH},
page AS MATERIALIZED (
  SELECT e.*, row_number() OVER (ORDER BY e."timestamp" DESC, e.id DESC) AS n FROM (
    SELECT e.* FROM events e, a WHERE a.twin IS NOT NULL AND e.twin_id = (SELECT $3::uuid) AND e.organization_id = (SELECT $2::uuid)
      ${after ? `AND (e."timestamp", e.id) < ((SELECT $5::timestamptz), (SELECT $6::uuid))` : ''}
     ORDER BY e."timestamp" DESC, e.id DESC LIMIT (SELECT $4::int + 1)) e)
${keysetSelect(EVENT_JSON, 'e', '$4::int', `json_build_array(e."timestamp"::text, e.id::text)`)},
       ${after ? `EXISTS (SELECT 1 FROM events e WHERE e.twin_id = $3::uuid AND e.organization_id = $2::uuid AND (e."timestamp", e.id) >= ((SELECT $5::timestamptz), (SELECT $6::uuid)))` : 'false'} AS beyond
  FROM a`;
const SQL_TIMELINE_FIRST = timelinePage(false);
const SQL_TIMELINE_AFTER = timelinePage(true);

/**
 * GET /twins/?page_after= — $4 size; with a position, $5 created and $6 id. The two halves of visibility, each from its index.
 * `newest`: sort=-created (newest first), else the list's own order (oldest first).
 */
const twinsKeyset = (after, json = TWIN_LIST_JSON, newest = false) => {
  const d = newest ? ' DESC' : '';
  const order = (a) => `${a}.created${d}, ${a}.id${d}`;
  const past = after ? `AND (s.created, s.id) ${newest ? '<' : '>'} ((SELECT $5::timestamptz), (SELECT $6::uuid))` : '';
  const before = `(s.created, s.id) ${newest ? '>=' : '<='} ((SELECT $5::timestamptz), (SELECT $6::uuid))`;
  return `WITH ${AUTH},
page AS MATERIALIZED (
  SELECT t.*, row_number() OVER (ORDER BY ${order('t')}) AS n FROM (
    SELECT u.* FROM (
      (SELECT s.* FROM twins s WHERE ${SHARED('s')} ${past} ORDER BY ${order('s')} LIMIT (SELECT $4::int + 1))
      UNION ALL
      (SELECT s.* FROM twins s WHERE s.organization_id = $2::uuid AND NOT ${SHARED('s')} ${past} ORDER BY ${order('s')} LIMIT (SELECT $4::int + 1))) u
    ORDER BY ${order('u')} LIMIT (SELECT $4::int + 1)) t)
${keysetSelect(json, 't', '$4::int', `json_build_array(t.created::text, t.id::text)`)},
       ${after ? `(EXISTS (SELECT 1 FROM twins s WHERE ${SHARED('s')} AND ${before})
                   OR EXISTS (SELECT 1 FROM twins s WHERE s.organization_id = $2::uuid AND NOT ${SHARED('s')} AND ${before}))` : 'false'} AS beyond
  FROM a`;
};

/** The list form with only the members of `fields[twins]` (validated names), relationships only when named. */
const TWIN_LIST_MEMBERS = {
  created: ts('t.created'), modified: ts('t.modified'), name: 't.name', description: 't.description', personal: 't.personal', connections: 't.connections',
  personality: `json_build_object('id', t.personality_id, 'characteristics', t.characteristics, 'services', t.services)`, 'meta-data': 't.meta_data',
  'place-id': `coalesce(t.place_id, '')`, provider: 't.provider', location: 'ST_AsGeoJSON(t.location)::json', 'opening-hours': 't.opening_hours',
  'phone-number': 't.phone_number', address: 't.address', city: 't.city', state: 't.state', website: 't.website', 'provider-info': 't.provider_info',
};
function sparseTwinJson(fields) {
  const pairs = fields.filter((f) => f in TWIN_LIST_MEMBERS).map((f) => `'${f}', ${TWIN_LIST_MEMBERS[f]}`);
  const attributes = pairs.length ? `json_build_object(${pairs.join(', ')})` : `'{}'::json`;
  return `json_build_object('type', 'twins', 'id', t.id, 'attributes', ${attributes}${fields.includes('organization') ? `, 'relationships', ${ORGANIZATION_REL('t')}` : ''})`;
}

/** GET /twins/ page 1.. with fields[twins] and include=organization — $4 size, $5 offset. */
const sparseTwinsPage = (json, includeOrganization) => `WITH ${AUTH},
page AS MATERIALIZED (
  SELECT t.* FROM (SELECT u.id, u.created FROM (
      (SELECT s.id, s.created FROM twins s WHERE ${SHARED('s')} ORDER BY s.created, s.id LIMIT (SELECT $4::int + $5::bigint))
      UNION ALL
      (SELECT s.id, s.created FROM twins s WHERE s.organization_id = $2::uuid AND NOT ${SHARED('s')} ORDER BY s.created, s.id LIMIT (SELECT $4::int + $5::bigint))) u
    ORDER BY u.created, u.id LIMIT (SELECT $4::int) OFFSET (SELECT $5::bigint)) p JOIN twins t ON t.id = p.id)
SELECT a.org, a.twin, CASE WHEN a.org IS NOT NULL THEN ${VISIBLE_COUNT} END AS count,
       CASE WHEN a.org IS NOT NULL THEN (SELECT json_agg(${json} ORDER BY t.created, t.id)::text FROM page t) END AS body,
       ${includeOrganization ? `(SELECT coalesce(json_agg(json_build_object('type', 'organizations', 'id', o.id, 'attributes', json_build_object('name', o.name, 'created', ${ts('o.created')}, 'modified', ${ts('o.modified')})) ORDER BY o.id), '[]')::text
          FROM organizations o WHERE o.id IN (SELECT organization_id FROM page))` : 'NULL'} AS included
  FROM a`;

/** GET /quests/?include=twin&fields[twins]=… — as questFeedSql, with the page's twins included (sparse). */
const questFeedIncluded = (twinJson, { where, size, offset, prefix }) => `WITH ${AUTH},
page AS MATERIALIZED (SELECT q.* FROM quests q, a WHERE a.twin IS NOT NULL AND ${where}
                       ORDER BY q.created DESC, q.id DESC LIMIT ${size} OFFSET ${offset})
SELECT a.org, a.twin,
       CASE WHEN a.twin IS NOT NULL THEN (SELECT count(*)::int FROM quests q WHERE ${where}) END AS count,
       CASE WHEN a.twin IS NOT NULL THEN
         (SELECT json_agg(${questJson(prefix, '(SELECT count(*) FROM quest_tasks k WHERE k.quest_id = q.id)')} ORDER BY q.created DESC, q.id DESC)::text
            FROM page q JOIN twins t ON t.id = q.twin_id LEFT JOIN quests o ON o.id = q.original_id LEFT JOIN twins ot ON ot.id = o.twin_id) END AS body,
       (SELECT coalesce(json_agg(${twinJson} ORDER BY t.id), '[]')::text FROM twins t WHERE t.id IN (SELECT twin_id FROM page)) AS included
  FROM a`;

/**
 * POST /quests/<id>/embark — $4 quest, $5 image URL prefix. One statement: lock the quest (shared, as a
 * started quest must not change underneath), judge it, copy it and its tasks for the acting twin, count
 * the copied tasks in their place twins' tasks_supplied (locked in id order), record the revenue entry,
 * and answer the copy in the full form. A second embark by the same twin inserts nothing (the unique
 * index quests_embark_unique, also under races): 409.
 */
const SQL_EMBARK = `WITH ${AUTH},
o AS (SELECT o.*, (o.organization_id = a.org AND o.twin_id = a.twin) AS mine,
             ((o.organization_id = a.org AND o.twin_id = a.twin) OR (o.public AND ${VISIBLE('ot')})) AS readable,
             ot.name AS twin_name, ot.description AS twin_description
        FROM a JOIN quests o ON o.id = $4::uuid JOIN twins ot ON ot.id = o.twin_id
       WHERE a.twin IS NOT NULL
         FOR SHARE OF o),
c AS (INSERT INTO quests (organization_id, twin_id, name, summary, description, summary_image_id, public, original_id, price)
      SELECT $2::uuid, $3::uuid, o.name, o.summary, o.description, o.summary_image_id, false, o.id, o.price
        FROM o WHERE o.readable AND NOT o.mine AND o.original_id IS NULL
      ON CONFLICT (original_id, twin_id) WHERE original_id IS NOT NULL DO NOTHING
      RETURNING *),
k AS (INSERT INTO quest_tasks (organization_id, quest_id, name, description, position, place_twin_id)
      SELECT c.organization_id, c.id, k.name, k.description, k.position, k.place_twin_id FROM c JOIN quest_tasks k ON k.quest_id = c.original_id
      RETURNING place_twin_id),
s AS (UPDATE twins t SET tasks_supplied = t.tasks_supplied + x.n
        FROM (SELECT place_twin_id, count(*)::int AS n FROM k WHERE place_twin_id IS NOT NULL GROUP BY place_twin_id ORDER BY place_twin_id) x
       WHERE t.id = x.place_twin_id
      RETURNING t.id),
r AS (INSERT INTO revenue_entries (organization_id, quest_id, twin_id, embarking_twin_id, copy_id, amount)
      SELECT o.organization_id, o.id, o.twin_id, c.twin_id, c.id, o.price FROM c JOIN o ON o.id = c.original_id
      RETURNING id),
-- The copy's change (webhook quest.embarked), as the service records it: the body is built once, for both.
ch AS (INSERT INTO changes (organization_id, twin_id, kind, subject_id, resource)
       SELECT q.organization_id, q.twin_id, 'quest.embarked', q.id, ${questJson('$5::text', '(SELECT count(*) FROM k)')}::text
         FROM c q JOIN twins t ON t.id = q.twin_id JOIN o ON o.id = q.original_id
              JOIN LATERAL (SELECT o.twin_id AS id, o.twin_name AS name, o.twin_description AS description) ot ON true
       RETURNING resource)
SELECT a.org, a.twin,
       (SELECT CASE WHEN NOT o.readable THEN 'not_found' WHEN o.mine THEN 'own_quest' WHEN o.original_id IS NOT NULL THEN 'not_an_original' ELSE 'ok' END FROM o) AS verdict,
       (SELECT resource FROM ch) AS body
  FROM a
  -- The places and the revenue entry are written while the FROM is read, before \`ch\` (read in the
  -- target list): ch's trigger takes the twin's change-log lock, held until commit, so it comes last.
  -- Unread, s and r would run after the query, with that lock held.
  CROSS JOIN (SELECT count(*) FROM s) s_written
  CROSS JOIN (SELECT count(*) FROM r) r_written`;

// ---------------------------------------------------------------------------------------------------
// Requests

class HttpError extends Error {
  constructor(status, code, detail, source) {
    super(detail);
    this.status = status;
    this.code = code;
    this.source = source;
  }
}
const notFound = (detail = 'The requested resource does not exist.') => new HttpError(404, 'not_found', detail);
const badParameter = (parameter, detail) => new HttpError(400, 'invalid_parameter', detail, { parameter });
const badHeader = (header, detail) => new HttpError(400, 'invalid_header', detail, { header });
const badDocument = (pointer, detail) => new HttpError(400, 'invalid_document', detail, { pointer });
const conflict = (code, detail, source) => new HttpError(409, code, detail, source);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isUuid = (value) => typeof value === 'string' && UUID.test(value);
const AUTHORIZATION = /^Token ([A-Za-z0-9_\-.~+/=]{1,512})$/i;

const header = (request, name) => {
  const value = request.headers[name];
  return typeof value === 'string' ? value.trim() : undefined;
};

/** $1..$3 of every statement, after the checks that need no database; `twin`: 'required' | 'optional' | undefined. */
function credentials(request, twin) {
  const token = typeof request.headers.authorization === 'string' ? AUTHORIZATION.exec(request.headers.authorization.trim())?.[1] : undefined;
  if (!token) throw new HttpError(401, 'not_authenticated', 'Send "Authorization: Token <ACCESS_TOKEN>".', { header: 'Authorization' });
  const organization = header(request, 'x-organization');
  if (!organization) throw badHeader('X-Organization', 'Send "X-Organization: <ORG_ID>".');
  if (!isUuid(organization)) throw badHeader('X-Organization', 'X-Organization must be an organization id (a UUID).');
  let twinId = null;
  if (twin) {
    const raw = header(request, 'x-twin');
    if (raw) {
      if (!isUuid(raw)) throw badHeader('X-Twin', 'X-Twin must be a twin id (a UUID).');
      twinId = raw;
    } else if (twin === 'required') {
      throw badHeader('X-Twin', 'Send "X-Twin: <TWIN_ID>" to act as one of the organization\'s twins.');
    }
  }
  return [createHash('sha256').update(token, 'utf8').digest(), organization, twinId];
}

/**
 * Statement texts built from a request's shape, built once per name (the name says the shape): every
 * statement whose text is not a constant goes through here, as the service's through its SqlTexts.
 */
const texts = new Map();
function textOf(name, build) {
  let text = texts.get(name);
  if (text === undefined) texts.set(name, (text = build()));
  return text;
}

/** Runs a named statement and judges the caller from its first row (see AUTH). */
async function answer(name, text, values, twin) {
  const { rows } = await pool.query({ name, text, values });
  return check(rows[0], values, twin);
}

/** The authentication verdicts of a statement's first row (AUTH): 401, 403, or the row. */
function check(row, values, twin) {
  if (!row) throw new HttpError(401, 'not_authenticated', 'The access token is unknown, revoked or expired.', { header: 'Authorization' });
  if (!row.org) throw new HttpError(403, 'forbidden', 'The account is not a member of that organization.', { header: 'X-Organization' });
  if (twin === 'required' && !row.twin) throw new HttpError(403, 'forbidden', 'The twin does not belong to the selected organization.', { header: 'X-Twin' });
  if (twin === 'optional' && values[2] !== null && !row.twin) {
    throw new HttpError(403, 'forbidden', 'The twin does not belong to the selected organization.', { header: 'X-Twin' });
  }
  return row;
}

/** `answer` of a statement whose page comes in parts (PARTS): the first row, its `body` the parts joined between `open` and `close` (null for none). */
async function answerParts(name, text, values, twin, open = '[', close = ']') {
  const { rows } = await pool.query({ name, text, values });
  const row = check(rows[0], values, twin);
  // In the order of their places, sorted here: an ORDER BY in the statement costs PostgreSQL more.
  const parts = rows.filter((r) => r.part !== null).sort((a, b) => a.g - b.g);
  row.body = parts.length === 0 ? null : open + parts.map((r) => r.part).join(',') + close;
  return row;
}

/** `scheme://host` of the request (cached per Host), as links and Location headers are built. */
const origins = new Map();
function originOf(request) {
  const key = `${request.protocol}://${request.host || 'localhost'}`;
  let origin = origins.get(key);
  if (origin === undefined) {
    origin = new URL(`${key}/`).origin;
    if (origins.size < 100) origins.set(key, origin);
  }
  return origin;
}

// Query strings ----------------------------------------------------------------------------------

const POSITIVE = /^[1-9]\d{0,9}$/;
const NUMBER = /^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(?:Z|[+-](\d{2}):?(\d{2}))?)?$/;

function pageOf(query, limits) {
  const read = (name, fallback, max) => {
    const raw = query[name];
    if (raw === undefined) return fallback;
    if (typeof raw !== 'string' || !POSITIVE.test(raw) || Number(raw) > max) throw badParameter(name, `${name} must be a whole number from 1 to ${max}.`);
    return Number(raw);
  };
  const number = read('page_number', 1, Number.MAX_SAFE_INTEGER);
  const size = read('page_size', limits.defaultSize, limits.maxSize);
  return { number, size, offset: (number - 1) * size };
}

const text = (raw, name) => {
  if (raw.length === 0 || raw.length > 1000 || raw.includes('\u0000')) throw badParameter(name, `${name} must be 1 to 1000 characters.`);
  return raw;
};
const uuid = (raw, name) => {
  if (!isUuid(raw)) throw badParameter(name, `${name} must be a UUID.`);
  return raw.toLowerCase();
};
const boolean = (raw, name) => {
  const value = raw.toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw badParameter(name, `${name} must be true or false.`);
};
const numbers = (count, raw, name) => {
  const parts = raw.split(',');
  const values = parts.map((part) => (NUMBER.test(part) ? Number(part) : Number.NaN));
  if (parts.length !== count || values.some((v) => !Number.isFinite(v))) throw badParameter(name, `${name} must be ${count} comma-separated numbers.`);
  return values;
};
const lonLat = (lon, lat, name) => {
  if (lon < -180 || lon > 180 || lat < -90 || lat > 90) throw badParameter(name, `${name}: longitude/latitude out of range.`);
};
const timestamp = (raw, name) => {
  const m = TIMESTAMP.exec(raw);
  const day = m && new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  const ok = m && Number(m[1]) >= 1 && day.getUTCMonth() === Number(m[2]) - 1 && day.getUTCDate() === Number(m[3])
    && Number(m[4] ?? 0) <= 23 && Number(m[5] ?? 0) <= 59 && Number(m[6] ?? 0) <= 59 && Number(m[7] ?? 0) <= 15 && Number(m[8] ?? 0) <= 59;
  if (!ok) throw badParameter(name, `${name} must be an ISO 8601 timestamp of a real date.`);
  return raw;
};

const TWIN_FILTERS = {
  is_public: boolean,
  is_personal: boolean,
  personality: uuid,
  characteristics: (raw, name) => {
    const items = raw.split(',').map((item) => item.trim());
    if (items.length > 50 || items.some((item) => item.length === 0 || item.length > 255 || item.includes('\u0000'))) {
      throw badParameter(name, `${name} must be a comma-separated list of 1 to 50 non-empty values.`);
    }
    return items;
  },
  organization: uuid,
  is_connection: boolean,
  is_supplier: boolean,
  in_bbox: (raw, name) => {
    const [minLon, minLat, maxLon, maxLat] = numbers(4, raw, name);
    lonLat(minLon, minLat, name);
    lonLat(maxLon, maxLat, name);
    if (minLon > maxLon || minLat > maxLat) throw badParameter(name, `${name} must be minLon,minLat,maxLon,maxLat with min ≤ max.`);
    return [minLon, minLat, maxLon, maxLat];
  },
  point: (raw, name) => {
    const [lon, lat] = numbers(2, raw, name);
    lonLat(lon, lat, name);
    return [lon, lat];
  },
  dist: (raw, name) => {
    const value = NUMBER.test(raw) ? Number(raw) : Number.NaN;
    if (!(value >= 0 && value <= 20_037_509)) throw badParameter(name, `${name} must be a number from 0 to 20037509.`);
    return value;
  },
  ordering: (raw, name) => {
    if (raw !== 'distance') throw badParameter(name, `${name} must be one of: distance.`);
    return raw;
  },
};
const OWN_FILTERS = { in_bbox: TWIN_FILTERS.in_bbox, point: TWIN_FILTERS.point, dist: TWIN_FILTERS.dist, ordering: TWIN_FILTERS.ordering };

/** Reads the filters a route accepts: unknown or repeated names and malformed values are 400s. */
function filtersOf(query, readers) {
  const filters = {};
  for (const name in query) {
    const raw = query[name];
    if (name === 'page_number' || name === 'page_size' || name === 'page_after' || name === 'fields[twins]' || name === 'include' || name === 'sort') continue;
    const reader = Object.hasOwn(readers, name) ? readers[name] : undefined;
    if (!reader) throw badParameter(name, `Unknown query parameter "${name}".`);
    if (typeof raw !== 'string') throw badParameter(name, `${name} must be given once.`);
    filters[name] = reader(raw, name);
  }
  if (filters.dist !== undefined && !filters.point) throw badParameter('dist', 'dist needs point=lon,lat.');
  if (filters.ordering && !filters.point) throw badParameter('ordering', 'ordering=distance needs point=lon,lat.');
  if (filters.point && filters.dist === undefined && !filters.ordering) throw badParameter('point', 'point needs dist or ordering=distance.');
  return filters;
}

/**
 * WHERE / ORDER BY of a filtered twin list, with placeholders from $4 on. The text depends only on which
 * filters are present, so each combination is one named prepared statement.
 */
function compileTwinFilters(filters, { own, located }) {
  const values = [];
  const add = (value, cast) => `$${values.push(value) + 3}${cast}`;
  const where = [own ? 't.organization_id = $2::uuid' : VISIBLE('t')];
  const order = [];
  const key = [own ? 'own' : 'all', located ? 'geo' : 'list'];
  if (filters.is_public !== undefined) where.push(filters.is_public ? 't.public' : 'NOT t.public'), key.push(`pub${+filters.is_public}`);
  if (filters.is_supplier !== undefined) where.push(filters.is_supplier ? 'cardinality(t.services) > 0' : 'cardinality(t.services) = 0'), key.push(`sup${+filters.is_supplier}`);
  if (filters.is_personal !== undefined) {
    where.push(filters.is_personal ? 't.owner_account_id = (SELECT account FROM a)' : 't.owner_account_id IS DISTINCT FROM (SELECT account FROM a)');
    key.push(`per${+filters.is_personal}`);
  }
  if (filters.organization !== undefined) where.push(`t.organization_id = ${add(filters.organization, '::uuid')}`), key.push('org');
  if (filters.characteristics !== undefined) where.push(`t.characteristics @> ${add(filters.characteristics, '::text[]')}`), key.push('chr');
  if (filters.is_connection !== undefined) {
    const connections = `coalesce((SELECT c.connections FROM twins c WHERE c.id = $3::uuid), '{}')`;
    where.push(filters.is_connection ? `t.id = ANY (${connections})` : `NOT (t.id = ANY (${connections}))`);
    key.push(`con${+filters.is_connection}`);
  }
  if (filters.in_bbox) {
    const [a, b, c, d] = filters.in_bbox;
    where.push(`t.location && ST_MakeEnvelope(${add(a, '::float8')}, ${add(b, '::float8')}, ${add(c, '::float8')}, ${add(d, '::float8')}, 4326)`);
    key.push('box');
  }
  if (located) where.push('t.location IS NOT NULL');
  if (filters.point) {
    const [lon, lat] = filters.point;
    const point = `ST_SetSRID(ST_MakePoint(${add(lon, '::float8')}, ${add(lat, '::float8')}), 4326)::geography`;
    if (filters.dist !== undefined) where.push(`ST_DWithin(t.location::geography, ${point}, ${add(filters.dist, '::float8')})`), key.push('dist');
    if (filters.ordering) order.push(`t.location::geography <-> ${point}`), key.push('near');
  }
  if (filters.personality !== undefined) {
    // The reference twin must be visible; its characteristics are read in the same statement.
    const reference = add(filters.personality, '::uuid');
    const characteristics = `(SELECT r.characteristics FROM twins r WHERE r.id = ${reference} AND ${VISIBLE('r')})`;
    where.push(`t.characteristics && ${characteristics}`, `t.id <> ${reference}`);
    order.push(`cardinality(ARRAY(SELECT unnest(t.characteristics) INTERSECT SELECT unnest(${characteristics}))) DESC`);
    key.push('pers');
  }
  // Nearest first without a radius is a KNN scan, which only serves the distance as the sole sort key.
  if (!(filters.ordering && filters.dist === undefined && filters.personality === undefined)) order.push('t.created', 't.id');
  return { key: key.join('-'), where: where.join(' AND '), orderBy: order.join(', '), values, add };
}

/**
 * The request URL as a function of one paging parameter's value: `drop` removed, `parameter` set, as
 * `url.searchParams` would (in place, else appended), but with the query parsed and serialized once off
 * the URL: a URL's searchParams re-parse the whole URL on every change. Values are digits or cursors
 * (base64url and '.'), which form-encoding keeps as they are.
 */
function linkTo(request, parameter, drop = []) {
  const href = new URL(request.url, `${originOf(request)}/`).href;
  const hashAt = href.indexOf('#');
  const beforeHash = hashAt < 0 ? href : href.slice(0, hashAt);
  const queryAt = beforeHash.indexOf('?');
  const params = new URLSearchParams(queryAt < 0 ? '' : beforeHash.slice(queryAt));
  for (const name of drop) params.delete(name);
  params.set(parameter, '');
  const query = params.toString();
  const end = (query.startsWith(`${parameter}=`) ? 0 : query.indexOf(`&${parameter}=`) + 1) + parameter.length + 1;
  const head = `${queryAt < 0 ? beforeHash : beforeHash.slice(0, queryAt)}?${query.slice(0, end)}`;
  const tail = `${query.slice(end)}${hashAt < 0 ? '' : href.slice(hashAt)}`;
  return (value) => `${head}${value}${tail}`;
}

/** First/last/next/prev of a page: the request URL with page_number swapped, as the service links pages. */
function pageEnvelope(request, page, count, data) {
  const pages = Math.max(1, Math.ceil(count / page.size));
  if (page.number > pages) throw notFound(`Page ${page.number} does not exist; the last page is ${pages}.`);
  const withNumber = linkTo(request, 'page_number');
  const at = (n) => withNumber(String(n));
  const first = at(1);
  const last = at(pages);
  const next = page.number < pages ? at(page.number + 1) : null;
  const prev = page.number > 1 ? at(page.number - 1) : null;
  const links = JSON.stringify({ first, last, next, prev });
  const meta = `{"pagination":{"page":${page.number},"pages":${pages},"count":${count}}}`;
  return { links, meta, body: data === undefined ? undefined : `{"links":${links},"data":${data ?? '[]'},"meta":${meta}}` };
}


// Cursors (page_after) --------------------------------------------------------------------------------

const CURSOR_KEY = createHash('sha256').update(process.env.CURSOR_SECRET ?? 'raw-server-cursor-secret-0123456789').digest();
const cursorSignature = (payload) => createHmac('sha256', CURSOR_KEY).update(payload).digest().subarray(0, 16).toString('base64url');
const signCursor = (scope, position) => {
  const payload = Buffer.from(JSON.stringify([scope, position])).toString('base64url');
  return `${payload}.${cursorSignature(payload)}`;
};
/** The position a cursor of `scope` holds; a 400 for anything else. */
function readCursor(scope, parameter, cursor) {
  const refused = () => badParameter(parameter, `${parameter} is not a cursor of this list.`);
  const dot = cursor.indexOf('.');
  if (dot <= 0) throw refused();
  const payload = cursor.slice(0, dot);
  const given = Buffer.from(cursor.slice(dot + 1));
  const expected = Buffer.from(cursorSignature(payload));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refused();
  const [got, position] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  if (got !== scope || !Array.isArray(position)) throw refused();
  return position;
}
/** `{links: {first, last, prev, next}, data}` of a keyset page read forwards (the service's links). */
function cursorBody(request, scope, row, fromPosition) {
  const drop = ['page_after', 'page_before', 'page_number'];
  const urls = { page_after: linkTo(request, 'page_after', drop), page_before: linkTo(request, 'page_before', drop) };
  const at = (parameter, position) => urls[parameter](position ? signCursor(scope, position) : '');
  const links = {
    first: at('page_after', null),
    last: at('page_before', null),
    prev: fromPosition && row.beyond ? at('page_before', row.first) : null,
    next: row.more ? at('page_after', row.last) : null,
  };
  return `{"links":${JSON.stringify(links)},"data":${row.body ?? '[]'}}`;
}

// Request documents ------------------------------------------------------------------------------

// eslint-disable-next-line no-control-regex -- finding U+0000 is the point
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Text PostgreSQL cannot store (NUL, lone surrogates) anywhere, or nesting deeper than 64 levels. */
function checkStorable(value, depth, pointer) {
  if (typeof value === 'string') {
    if (UNSTORABLE.test(value)) throw badDocument(pointer, 'Text must not contain U+0000 (NUL) or unpaired UTF-16 surrogates.');
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (depth > 64) throw badDocument(pointer, 'The document is nested more than 64 levels deep.');
  for (const name in value) {
    if (UNSTORABLE.test(name)) throw badDocument(`${pointer}/${name}`, 'Member names must not contain U+0000 (NUL) or unpaired UTF-16 surrogates.');
    checkStorable(value[name], depth + 1, `${pointer}/${name}`);
  }
}

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `{data: {type: 'events', id?, attributes}}`; `id`: 'forbidden' (create) or 'required' (update). */
function eventDocument(body, id) {
  if (!isObject(body)) throw badDocument('', 'The request needs a JSON:API document (a JSON object with "data").');
  checkStorable(body, 1, '');
  const data = body.data;
  if (!isObject(data)) throw badDocument('/data', '"data" must be a resource object.');
  if (typeof data.type !== 'string') throw badDocument('/data/type', '"type" is required and must be a string.');
  if (data.type !== 'events') throw conflict('type_mismatch', '"type" must be "events".', { pointer: '/data/type' });
  if (data.id !== undefined) {
    if (id === 'forbidden') throw new HttpError(403, 'client_generated_id', 'Client-generated ids are not supported.', { pointer: '/data/id' });
    if (typeof data.id !== 'string') throw badDocument('/data/id', '"id" must be a string.');
  } else if (id === 'required') {
    throw badDocument('/data/id', '"id" is required.');
  }
  const attributes = data.attributes ?? {};
  if (!isObject(attributes)) throw badDocument('/data/attributes', '"attributes" must be an object.');
  if (data.relationships !== undefined && (!isObject(data.relationships) || Object.keys(data.relationships).length > 0)) {
    throw badDocument('/data/relationships', 'Events have no relationships.');
  }
  for (const name in attributes) {
    if (name !== 'name' && name !== 'category' && name !== 'data') throw badDocument(`/data/attributes/${name}`, `Unknown attribute "${name}".`);
  }
  return { id: data.id, attributes };
}

/** 1–255 characters (a surrogate pair counts once, as class-validator counts). */
function checkLabel(attributes, name, required) {
  const value = attributes[name];
  if (value === undefined && !required) return null;
  if (typeof value !== 'string' || value.length === 0) throw badDocument(`/data/attributes/${name}`, `${name} must be a non-empty string.`);
  if (value.length > 255 && value.length - (value.match(/[\ud800-\udbff][\udc00-\udfff]/g)?.length ?? 0) > 255) {
    throw badDocument(`/data/attributes/${name}`, `${name} must be shorter than or equal to 255 characters`);
  }
  return value;
}

/** The event `data` object as compact JSON text, at most 64 KiB. */
function checkData(attributes, required) {
  const value = attributes.data;
  if (value === undefined && !required) return '{}';
  if (!isObject(value)) throw badDocument('/data/attributes/data', 'data must be a JSON object');
  const json = JSON.stringify(value);
  if (Buffer.byteLength(json, 'utf8') > MAX_EVENT_DATA_BYTES) {
    throw badDocument('/data/attributes/data', `data must be at most ${MAX_EVENT_DATA_BYTES} bytes when serialised as JSON`);
  }
  return json;
}

/** UUIDv7 (48-bit ms, 12-bit counter within the ms, 62 random bits): ids of one process increase strictly. */
const random = Buffer.alloc(4096);
let randomAt = random.length;
let lastMs = 0;
let counter = 0;
function uuidv7() {
  if (randomAt + 10 > random.length) {
    randomFillSync(random);
    randomAt = 0;
  }
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    counter = random.readUInt16BE(randomAt) & 0x7ff;
  } else if (++counter > 0xfff) {
    lastMs += 1;
    counter = random.readUInt16BE(randomAt) & 0x7ff;
  }
  const hex = lastMs.toString(16).padStart(12, '0') + (0x7000 | counter).toString(16) + ((random[randomAt + 2] & 0x3f) | 0x80).toString(16).padStart(2, '0')
    + random.toString('hex', randomAt + 3, randomAt + 10);
  randomAt += 10;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

// ---------------------------------------------------------------------------------------------------
// Routes

const app = Fastify({ logger: false, bodyLimit: 1024 * 1024, routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 } });
app.removeAllContentTypeParsers();
// Plain JSON.parse: member names such as "__proto__" are client data (own properties), kept as sent.
app.addContentTypeParser(['application/vnd.api+json', 'application/json'], { parseAs: 'string' }, (_request, body, done) => {
  try {
    done(null, body === '' ? undefined : JSON.parse(body));
  } catch {
    done(badDocument('', 'The body is not valid JSON.'));
  }
});
app.addHook('onRequest', (request, reply, done) => {
  reply.header('x-request-id', randomUUID());
  done();
});
app.addHook('onSend', (_request, reply, _payload, done) => {
  const type = reply.getHeader('content-type');
  if (typeof type === 'string' && type.endsWith(APPENDED_CHARSET) && /^application\/(?:[\w.-]+\+)?json(?:;|$)/i.test(type)) reply.header('content-type', type.slice(0, -APPENDED_CHARSET.length));
  reply.header('x-content-type-options', 'nosniff');
  reply.header('x-frame-options', 'DENY');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
  done();
});
app.setErrorHandler((error, _request, reply) => {
  const status = error.status ?? error.statusCode ?? 500;
  if (status >= 500 || process.env.BENCH_RAW_DEBUG) process.stderr.write(`raw server: ${status} ${error.code ?? ''} ${error.message}\n`);
  const problem = { status: String(status), code: error.code && status < 500 ? String(error.code).toLowerCase() : 'error', title: error.status ? undefined : 'Error', detail: status >= 500 ? 'Internal error.' : error.message };
  if (error.source) problem.source = error.source;
  reply.status(status).header('content-type', JSON_API).send(JSON.stringify({ errors: [problem] }));
});

/** Whether If-None-Match names this tag (weak comparison, `*`, any content coding of it). */
function ifNoneMatch(request, etag) {
  const header = request.headers['if-none-match'];
  if (typeof header !== 'string') return false;
  if (header.trim() === '*') return true;
  const wanted = etag.slice(1, -1);
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '').slice(1, -1).replace(/;[a-z]+$/, '') === wanted);
}

/**
 * Sends a JSON answer as the contract says: GET 200s tagged (`etag`, or a SHA-1 of the body) and 304
 * when If-None-Match names the tag; over 1 KiB, brotli (quality 4) or gzip (level 6) when accepted, the
 * tag naming the coding; `Vary: Accept-Encoding` always. Bodies past 64 KiB go out as a Buffer: off the
 * V8 heap while slow clients drain them (a string would stay in the socket's queue).
 */
function send(reply, text, status = 200, type = JSON_API, etag = undefined) {
  const vary = reply.getHeader('vary');
  reply.header('vary', vary ? `${vary}, Accept-Encoding` : 'Accept-Encoding');
  // Encoded once: the tag hashes the bytes that are sent.
  const body = text.length > 65536 ? Buffer.from(text, 'utf8') : text;
  if (reply.request.method === 'GET' && status === 200) {
    etag ??= `"h${createHash('sha1').update(body).digest('base64url')}"`;
    if (ifNoneMatch(reply.request, etag)) return reply.status(304).header('etag', etag).send();
  }
  const accepted = reply.request.headers['accept-encoding'] ?? '';
  const coding = Buffer.byteLength(body) < 1024 ? undefined : /\bbr\b/.test(accepted) ? 'br' : /\bgzip\b/.test(accepted) ? 'gzip' : undefined;
  if (etag) reply.header('etag', coding ? `${etag.slice(0, -1)};${coding}"` : etag);
  reply.status(status).header('content-type', type);
  if (coding === 'br') return reply.header('content-encoding', 'br').send(brotliCompressSync(body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4 } }));
  if (coding === 'gzip') return reply.header('content-encoding', 'gzip').send(gzipSync(body, { level: 6 }));
  return reply.send(body);
}

/**
 * Geo features being listed at once (a listing costs its page size), as the service bounds them: 50
 * callers of 10,000-feature pages would otherwise hold hundreds of megabytes for no more throughput.
 */
const GEO_FEATURES_AT_ONCE = 20_000;
let geoInFlight = 0;
const geoWaiting = [];
async function geoBudget(size, work) {
  while (geoInFlight > 0 && geoInFlight + size > GEO_FEATURES_AT_ONCE) await new Promise((resolve) => geoWaiting.push(resolve));
  geoInFlight += size;
  try {
    return await work();
  } finally {
    geoInFlight -= size;
    geoWaiting.splice(0).forEach((resolve) => resolve());
  }
}

// Twins ----------------------------------------------------------------------------------------------

app.get('/twins/:id', async (request, reply) => {
  const values = credentials(request, undefined);
  if (!isUuid(request.params.id)) throw notFound();
  if (request.headers['if-none-match'] !== undefined) {
    const current = await answer('twin-etag', SQL_TWIN_ETAG, [...values, request.params.id], undefined);
    if (current.etag && ifNoneMatch(request, current.etag)) return reply.status(304).header('vary', 'Accept-Encoding').header('etag', current.etag).send();
  }
  const row = await answer('twin-detail', SQL_TWIN_DETAIL, [...values, request.params.id], undefined);
  if (!row.body) throw notFound('No such twin.');
  return send(reply, `{"data":${row.body}}`, 200, JSON_API, row.etag);
});

const wantsGeoJson = (headers) => {
  const contentType = headers['content-type'];
  if (typeof contentType === 'string' && contentType.split(';')[0].trim().toLowerCase() === 'application/geo+json') return true;
  return typeof headers.accept === 'string' && headers.accept.split(',').some((range) => {
    const [type, ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    return type === 'application/geo+json' && (q === undefined || Number(q.slice(2)) > 0);
  });
};

app.get('/twins', async (request, reply) => {
  const values = credentials(request, 'optional');
  reply.header('vary', 'Accept, Content-Type');
  const filters = filtersOf(request.query, TWIN_FILTERS);
  if (filters.is_connection !== undefined && values[2] === null) throw badHeader('X-Twin', 'is_connection needs "X-Twin: <TWIN_ID>".');
  const geo = wantsGeoJson(request.headers);
  const page = pageOf(request.query, geo ? GEO_PAGE : PAGE);
  const names = Object.keys(filters);
  const q = request.query;
  if (q.page_after !== undefined || q['fields[twins]'] !== undefined || q.include !== undefined || q.sort !== undefined) {
    // Only what the benchmark asks: keyset pages and sparse/compound pages of the unfiltered list.
    if (geo || names.length > 0 || q.page_number !== undefined) throw badParameter('page_after', 'This server pages by cursor, or with fields/include, only the unfiltered list.');
    const fields = q['fields[twins]'] === undefined ? Object.keys(TWIN_LIST_MEMBERS).concat('organization') : q['fields[twins]'] === '' ? [] : q['fields[twins]'].split(',');
    for (const field of fields) if (!(field in TWIN_LIST_MEMBERS) && field !== 'organization') throw badParameter('fields[twins]', `Unknown field "${field}".`);
    const fieldsKey = createHash('sha1').update(fields.join(',')).digest('hex').slice(0, 12);
    if (q.page_after !== undefined) {
      if (q.include !== undefined) throw badParameter('include', 'This server includes on numbered pages only.');
      if (q.sort !== undefined && q.sort !== '-created') throw badParameter('sort', 'This server sorts keyset pages by -created only.');
      const newest = q.sort === '-created';
      const scope = newest ? 'twins:-created' : 'twins:';
      const position = q.page_after === '' ? null : readCursor(scope, 'page_after', q.page_after);
      const name = `twins-${position ? 'after' : 'first'}-${newest ? 'newest-' : ''}${fieldsKey}`;
      const row = await answer(name, textOf(name, () => twinsKeyset(position !== null, sparseTwinJson(fields), newest)), [...values, page.size, ...(position ?? [])], 'optional');
      return send(reply, cursorBody(request, scope, row, position !== null));
    }
    if (q.include !== undefined && q.include !== 'organization') throw badParameter('include', 'include may name "organization".');
    const key = `${fields.join(',')}|${q.include ?? ''}`;
    const name = `twins-sparse-${createHash('sha1').update(key).digest('hex').slice(0, 12)}`;
    const row = await answer(name, textOf(name, () => sparseTwinsPage(sparseTwinJson(fields), q.include !== undefined)), [...values, page.size, page.offset], 'optional');
    const { links, meta } = pageEnvelope(request, page, row.count, undefined);
    return send(reply, `{"links":${links},"data":${row.count === 0 ? '[]' : row.body}${row.included === null ? '' : `,"included":${row.included}`},"meta":${meta}}`);
  }
  let row;
  if (!geo && names.length === 0) {
    row = await answer('twins-page', SQL_TWINS_PAGE, [...values, page.size, page.offset], 'optional');
  } else if (!geo && names.length === 1 && names[0] === 'organization') {
    row = await answerParts('twins-of-organization', SQL_TWINS_OF_ORGANIZATION, [...values, filters.organization, page.size, page.offset], 'optional');
  } else {
    const compiled = compileTwinFilters(filters, { own: false, located: geo });
    const [size, offset] = [compiled.add(page.size, '::int'), compiled.add(page.offset, '::bigint')];
    const name = `twins-${compiled.key}`;
    const sql = textOf(name, () => filteredTwinsSql({ ...compiled, size, offset }, geo ? 'geo' : 'list'));
    const query = () => (geo ? answerParts(name, sql, [...values, ...compiled.values], 'optional', '{"type":"FeatureCollection","features":[', ']}') : answerParts(name, sql, [...values, ...compiled.values], 'optional'));
    row = await (geo ? geoBudget(page.size, query) : query());
  }
  if (!geo) return send(reply, pageEnvelope(request, page, row.count, row.body).body);
  const { links, meta } = pageEnvelope(request, page, row.count, undefined);
  const results = row.count === 0 ? '{"type":"FeatureCollection","features":[]}' : row.body;
  return send(reply, `{"links":${links},"data":{"results":${results},"meta":${meta},"links":${links}},"meta":${meta}}`, 200, GEO_JSON);
});

app.get('/my/twins', async (request, reply) => {
  const values = credentials(request, undefined);
  const filters = filtersOf(request.query, OWN_FILTERS);
  const page = pageOf(request.query, PAGE);
  let row;
  if (Object.keys(filters).length === 0) {
    row = await answer('my-twins-page', SQL_MY_TWINS_PAGE, [...values, page.size, page.offset], undefined);
  } else {
    const compiled = compileTwinFilters(filters, { own: true, located: false });
    const [size, offset] = [compiled.add(page.size, '::int'), compiled.add(page.offset, '::bigint')];
    const name = `twins-${compiled.key}`;
    row = await answerParts(name, textOf(name, () => filteredTwinsSql({ ...compiled, size, offset }, 'own')), [...values, ...compiled.values], undefined);
  }
  return send(reply, pageEnvelope(request, page, row.count, row.body).body);
});

// Events ---------------------------------------------------------------------------------------------

app.post('/events', async (request, reply) => {
  const values = credentials(request, 'required');
  const { attributes } = eventDocument(request.body, 'forbidden');
  const name = checkLabel(attributes, 'name', true);
  const category = checkLabel(attributes, 'category', true);
  const data = checkData(attributes, true);
  const id = uuidv7();
  const row = await answer('event-insert', SQL_EVENT_INSERT, [...values, id, name, category, data], 'required');
  reply.header('location', `${originOf(request)}/events/${id}`);
  return send(reply, `{"data":${row.body}}`, 201);
});

app.get('/events', async (request, reply) => {
  const values = credentials(request, 'required');
  const q = request.query;
  for (const name in q) {
    if (!['name', 'category', 'since', 'until', 'page_number', 'page_size', 'page_after'].includes(name)) throw badParameter(name, `Unknown query parameter "${name}".`);
    if (typeof q[name] !== 'string') throw badParameter(name, `${name} must be given once.`);
  }
  const page = pageOf(q, PAGE);
  if (q.page_after !== undefined) {
    // Keyset pages of the whole timeline (the benchmark's), newest first.
    if (q.page_number !== undefined || q.name !== undefined || q.category !== undefined || q.since !== undefined || q.until !== undefined) {
      throw badParameter('page_after', 'This server pages the unfiltered timeline by cursor only.');
    }
    const position = q.page_after === '' ? null : readCursor('events:-timestamp', 'page_after', q.page_after);
    const row = await answer(position ? 'timeline-after' : 'timeline-first', position ? SQL_TIMELINE_AFTER : SQL_TIMELINE_FIRST, [...values, page.size, ...(position ?? [])], 'required');
    return send(reply, cursorBody(request, 'events:-timestamp', row, position !== null));
  }
  const filter = [
    q.name === undefined ? null : text(q.name, 'name'),
    q.category === undefined ? null : text(q.category, 'category'),
    q.since === undefined ? null : timestamp(q.since, 'since'),
    q.until === undefined ? null : timestamp(q.until, 'until'),
  ];
  const row = await answer('timeline', SQL_TIMELINE, [...values, ...filter, page.size, page.offset], 'required');
  return send(reply, pageEnvelope(request, page, row.count, row.body).body);
});

app.patch('/events/:id', async (request, reply) => {
  const values = credentials(request, 'required');
  if (!isUuid(request.params.id)) throw notFound();
  const id = request.params.id.toLowerCase();
  const document = eventDocument(request.body, 'required');
  if (document.id.toLowerCase() !== id) throw conflict('id_mismatch', `"id" must be the id of the URL (${id}).`, { pointer: '/data/id' });
  const { attributes } = document;
  const patch = [id, checkLabel(attributes, 'name', false), checkLabel(attributes, 'category', false), checkData(attributes, false)];
  const row = await answer('event-update', SQL_EVENT_UPDATE, [...values, ...patch], 'required');
  if (row.found === 0) throw notFound('No such event on the timeline of this twin.');
  if (row.body) return send(reply, `{"data":${row.body}}`);
  // The merge is over 64 KiB in jsonb text: measure it exactly (compact JSON), in a transaction.
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const exact = (await client.query({ name: 'event-update-exact', text: SQL_EVENT_UPDATE_EXACT, values: [...values, ...patch] })).rows[0];
    if (!exact) throw notFound('No such event on the timeline of this twin.');
    if (Buffer.byteLength(JSON.stringify(JSON.parse(exact.data)), 'utf8') > MAX_EVENT_DATA_BYTES) {
      throw badDocument('/data/attributes/data', `The merged data would exceed ${MAX_EVENT_DATA_BYTES} bytes serialised.`);
    }
    await client.query('COMMIT');
    return send(reply, `{"data":${exact.body}}`);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
});

// Quests ---------------------------------------------------------------------------------------------

app.get('/quests', async (request, reply) => {
  const values = credentials(request, 'required');
  const q = request.query;
  for (const name in q) {
    if (!['owned_by', 'name', 'description', 'page_number', 'page_size', 'include', 'fields[twins]'].includes(name)) throw badParameter(name, `Unknown query parameter "${name}".`);
    if (typeof q[name] !== 'string') throw badParameter(name, `${name} must be given once.`);
  }
  const page = pageOf(q, PAGE);
  const filter = [
    q.owned_by === undefined ? null : uuid(q.owned_by, 'owned_by'),
    q.name === undefined ? null : text(q.name, 'name'),
    q.description === undefined ? null : text(q.description, 'description'),
  ];
  const feed = discoveryFeed(filter.map((value) => value !== null));
  const feedValues = [...values, ...filter.filter((value) => value !== null), page.size, page.offset, originOf(request)];
  if (q.include !== undefined) {
    // The benchmark's compound feed: the quests' twins included (list form, optionally sparse).
    if (q.include !== 'twin') throw badParameter('include', 'This server includes "twin" only.');
    const fields = q['fields[twins]'] === undefined ? Object.keys(TWIN_LIST_MEMBERS).concat('organization') : q['fields[twins]'] === '' ? [] : q['fields[twins]'].split(',');
    for (const field of fields) if (!(field in TWIN_LIST_MEMBERS) && field !== 'organization') throw badParameter('fields[twins]', `Unknown field "${field}".`);
    const name = `quest-feed-twins-${feed.key}-${createHash('sha1').update(fields.join(',')).digest('hex').slice(0, 12)}`;
    const row = await answer(name, textOf(name, () => questFeedIncluded(sparseTwinJson(fields), feed)), feedValues, 'required');
    const { links, meta } = pageEnvelope(request, page, row.count, undefined);
    return send(reply, `{"links":${links},"data":${row.count === 0 ? '[]' : row.body},"included":${row.included},"meta":${meta}}`);
  }
  const name = `quest-feed-${feed.key}`;
  const row = await answer(name, textOf(name, () => questFeedSql(feed)), feedValues, 'required');
  return send(reply, pageEnvelope(request, page, row.count, row.body).body);
});

app.post('/quests/:id/embark', async (request, reply) => {
  const values = credentials(request, 'required');
  if (!isUuid(request.params.id)) throw notFound();
  const row = await answer('embark', SQL_EMBARK, [...values, request.params.id, originOf(request)], 'required');
  if (!row.verdict || row.verdict === 'not_found') throw notFound('No such quest in the discovery feed.');
  if (row.verdict === 'own_quest') throw conflict('own_quest', 'A twin cannot embark on its own quest (or on its own copy).');
  if (row.verdict === 'not_an_original') throw conflict('not_an_original', 'This quest is a copy; embark on its original.');
  if (!row.body) throw conflict('already_embarked', 'The acting twin has already embarked on this quest.');
  return send(reply, `{"data":${row.body}}`, 201);
});

// Vector tiles -------------------------------------------------------------------------------------
// The default map (no filters): one statement with the caller's authentication; the tile's 64 × 64
// cells from the trigger-kept grid (twin_tile_cells, zooms 0-12, whose id sums name a cell's one twin)
// or counted live deeper; a cell of one twin is its point, of more a cluster; from zoom 17 every twin a
// point while the tile holds at most TILE_MAX_FEATURES; the layer from ST_AsMVT.

const TILE_MAX_FEATURES = 4096;
const tileFractions = `tile_fraction_x(ST_X(t.location)) AS fx, tile_fraction_y(ST_Y(t.location)) AS fy`;
// $4 z, $5 x, $6 y, $7 2^z, $8-$9 the tile's range of Z-order keys (tile_key, an index-only range scan).
const tileTwins = (limit) => `SELECT t.id, t.name, t.public, cardinality(t.services) > 0 AS supplier, f.fx, f.fy
    FROM twins t, LATERAL (SELECT ${tileFractions}) f, a
   WHERE t.location IS NOT NULL AND tile_key(t.location) >= $8::bigint AND tile_key(t.location) < $9::bigint
     AND (t.public OR cardinality(t.services) > 0 OR t.organization_id = a.org)${limit}`;
const tilePixel = (f, i) => `round((${f} * $7 - ${i}) * 4096)`;
const tilePoints = `(SELECT ST_AsMVT(m, 'twins', 4096, 'geom') FROM (SELECT ST_MakePoint(${tilePixel('p.fx', '$5')}, ${tilePixel('p.fy', '$6')}) AS geom, p.id::text AS id, p.name, p.public, p.supplier
    FROM matching p ORDER BY p.id) m)`;
// One feature per cell of `cells` (cell, n, fx, fy, id, name, public, supplier), in cell order.
const tileCells = (cells) => `(SELECT ST_AsMVT(m, 'twins', 4096, 'geom') FROM (
    SELECT ST_MakePoint(${tilePixel('c.fx', '$5')}, ${tilePixel('c.fy', '$6')}) AS geom,
           CASE WHEN c.n = 1 THEN c.id::text END AS id, CASE WHEN c.n = 1 THEN c.name END AS name,
           CASE WHEN c.n = 1 THEN c.public END AS public, CASE WHEN c.n = 1 THEN c.supplier END AS supplier,
           CASE WHEN c.n > 1 THEN c.n END AS count, CASE WHEN c.n > 1 THEN true END AS cluster
      FROM (${cells}) c ORDER BY c.cell) m)`;
const tileLiveCells = `SELECT (floor(w.fy * $7 * 64)::int - $6::int * 64) * 64 + floor(w.fx * $7 * 64)::int - $5::int * 64 AS cell, count(*) AS n,
    avg(w.fx) AS fx, avg(w.fy) AS fy, min(w.id::text) AS id, min(w.name) AS name, bool_or(w.public) AS public, bool_or(w.supplier) AS supplier
    FROM (${tileTwins('')}) w GROUP BY 1`;
// Zoom 8 on, a tile of few twins for its lone ones (a city at zoom 10-12) is cheaper counted live.
const SQL_TILE_GRID = `WITH ${AUTH},
  cells AS MATERIALIZED (SELECT c.cell, sum(c.count)::bigint AS n, sum(c.sum_x) AS sx, sum(c.sum_y) AS sy, sum(c.id_high) AS hi, sum(c.id_low) AS lo FROM twin_tile_cells c, a
    WHERE c.facet = '' AND c.organization_id IN ('00000000-0000-0000-0000-000000000000', a.org) AND c.zoom = $4::smallint AND c.x = $5::int AND c.y = $6::int
    GROUP BY c.cell HAVING sum(c.count) > 0),
  shape AS (SELECT coalesce(sum(n), 0) AS twins, count(*) FILTER (WHERE n = 1) AS lone FROM cells)
  SELECT a.org, a.twin, CASE WHEN $4::int < 8 OR (SELECT twins FROM shape) > 10 * (SELECT lone FROM shape)
    THEN ${tileCells(`SELECT c.cell, c.n, CASE WHEN t.id IS NULL THEN c.sx / c.n ELSE tile_fraction_x(ST_X(t.location)) END AS fx,
      CASE WHEN t.id IS NULL THEN c.sy / c.n ELSE tile_fraction_y(ST_Y(t.location)) END AS fy,
      t.id, t.name, t.public, cardinality(t.services) > 0 AS supplier
      FROM cells c LEFT JOIN twins t ON t.id = CASE WHEN c.n = 1 THEN (lpad(to_hex(c.hi::bigint), 16, '0') || lpad(to_hex(c.lo::bigint), 16, '0'))::uuid END`)}
    ELSE ${tileCells(tileLiveCells)} END AS tile
    FROM a`;
const SQL_TILE_LIVE = `WITH ${AUTH}
  SELECT a.org, a.twin, $4::int AS zoom, ${tileCells(tileLiveCells)} AS tile FROM a`;
const SQL_TILE_DEEP = `WITH ${AUTH},
  matching AS MATERIALIZED (${tileTwins(` LIMIT ${TILE_MAX_FEATURES + 1}`)}),
  n AS (SELECT count(*) AS n FROM matching)
  SELECT a.org, a.twin, $4::int AS zoom, CASE WHEN n.n > ${TILE_MAX_FEATURES} THEN ${tileCells(tileLiveCells)}
      WHEN n.n > 0 THEN ${tilePoints} END AS tile
    FROM a, n`;

/** A tile's range of tile_key: its cell's Z-order code at zoom z, shifted to the keys' 2^31 cells a side. */
function tileKeys(z, x, y) {
  let code = 0n;
  for (let bit = 0; bit < 31; bit++) code |= (BigInt((x >>> bit) & 1) << BigInt(2 * bit)) | (BigInt((y >>> bit) & 1) << BigInt(2 * bit + 1));
  const shift = BigInt(2 * (31 - z));
  return [(code << shift).toString(), ((code + 1n) << shift).toString()];
}
app.get('/twins/tiles/:z/:x/:y.mvt', async (request, reply) => {
  const values = credentials(request, 'optional');
  if (Object.keys(request.query).length > 0) throw new HttpError(400, 'invalid_parameter', 'This server answers the default map only.', { parameter: Object.keys(request.query)[0] });
  const [z, x, y] = ['z', 'x', 'y'].map((name) => (/^\d{1,10}$/.test(request.params[name]) ? Number(request.params[name]) : NaN));
  if (!(z <= 22)) throw new HttpError(400, 'invalid_parameter', 'z must be an integer from 0 to 22.', { parameter: 'z' });
  const n = 2 ** z;
  if (!(x < n)) throw new HttpError(400, 'invalid_parameter', 'x is out of range.', { parameter: 'x' });
  if (!(y < n)) throw new HttpError(400, 'invalid_parameter', 'y is out of range.', { parameter: 'y' });
  const keys = tileKeys(z, x, y);
  const row = z <= 12
    ? await answer('tile-grid', SQL_TILE_GRID, [...values, z, x, y, n, ...keys], 'optional')
    : await answer(z < 17 ? 'tile-live' : 'tile-deep', z < 17 ? SQL_TILE_LIVE : SQL_TILE_DEEP, [...values, z, x, y, n, ...keys], 'optional');
  reply.header('cache-control', 'private, no-cache').header('vary', 'Authorization, X-Organization, X-Twin');
  if (!row.tile || row.tile.length === 0) return reply.status(204).send();
  return send(reply, row.tile, 200, 'application/vnd.mapbox-vector-tile');
});

app.get('/health', (_request, reply) => send(reply, '{"status":"ok"}', 200, 'application/json; charset=utf-8'));

await app.listen({ port: Number(process.env.PORT ?? 3301), host: '127.0.0.1' });
process.send?.('ready');
const close = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.on('SIGTERM', close);
process.on('SIGINT', close);
