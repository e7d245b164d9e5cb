// The hand-written baseline of the moving twins' two routes, the yardstick bench/fleet.mjs measures the
// service against: `POST /twins/<id>/positions` and `GET /twins/<id>/track`. Like bench/raw-server.mjs it
// shares NO code with the service (nothing from src/ or dist/): plain Fastify + pg + node builtins, its own
// SQL over the same schema (db/migrations: positions partitioned by UTC day, changes, twins), written from
// the API's contract (docs/API.md, "Positions and tracks").
//
// How it is fast, and why each is fair game for the service too:
// - one statement per request, authentication included (token hash, revoked/expired, membership of
//   X-Organization: a CTE of the statement that does the work), as named prepared statements;
// - an upload is one statement: the twin locked, the positions inserted from column arrays (unnest) with
//   ON CONFLICT DO NOTHING, the twin moved to the newest stored position when it is newer than its
//   location, the `twin.moved` change row (its position drawn by the changes table's trigger), the
//   geofence crossings of the new positions (events and their changes), every change's pg_notify when
//   someone streams the twin (the schema's `twin_is_streamed`), as the service's statement does (SQL_UPLOAD);
// - a track page is JSON text built by PostgreSQL (concatenated, see trackPointsSql), in rows of 100
//   features (~21 kB) that Node joins: one 2 MB row makes pg grow its read buffer step by step (as
//   raw-server.mjs's long listings);
// - the upload is validated for real, with the service's limits (1 to 1,000 positions, coordinates in
//   range, `occurred` an instant with an offset, at most a day ahead and within the retention, the
//   optional measures in range, unknown members refused, every problem reported up to 100); error
//   answers are JSON:API errors whose wording need not match the service's.
// - the day partitions an upload names are made when missing (the same name, bounds and advisory lock as
//   the service), known days kept in memory.
//
//   DATABASE_URL=… PORT=… [CURSOR_SECRET=…] [POSITION_RETENTION_DAYS=90] node bench/raw-positions.mjs
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(join(dirname(fileURLToPath(import.meta.url)), '../package.json'));
const Fastify = require('fastify');
const { Pool } = require('pg');

const pool = new Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
  application_name: 'twin-bench-raw-positions',
  options: '-c TimeZone=UTC',
});

const JSON_API = 'application/vnd.api+json; charset=utf-8';
const GEO_JSON = 'application/geo+json';
const MAX_POSITIONS = 1000;
const MAX_PROBLEMS = 100;
const DAY_MS = 86_400_000;
const AHEAD_MS = DAY_MS;
const RETENTION_DAYS = Number(process.env.POSITION_RETENTION_DAYS ?? 90);
const TRACK_DEFAULT_SIZE = 1000;
const TRACK_MAX_SIZE = 10_000;
const NOTIFY_CHANNEL = 'twin_events';
const NOTIFY_RESOURCE_MAX = 7600;
/** The advisory lock the service takes while it makes partitions: the two never create one at once. */
const PARTITION_LOCK = 7_363_960_001;
/** Features per row of a track page. */
const FEATURES_PER_PART = 100;

// ---------------------------------------------------------------------------------------------------
// SQL

const iso = (column) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** $1 token hash, $2 X-Organization. No row: unknown, revoked or expired token (401); org NULL: not a member (403). */
const AUTH = `a AS (
  SELECT m.organization_id AS org
    FROM access_tokens k LEFT JOIN memberships m ON m.account_id = k.account_id AND m.organization_id = $2::uuid
   WHERE k.token_hash = $1::bytea AND k.revoked IS NULL AND (k.expires IS NULL OR k.expires > now()))`;

/** The JSON of the row `m` of a move: its newest position in the upload's own form (the `twin.moved` resource). */
const positionJson = (m) => `json_build_object('type', 'positions',
  'attributes', json_build_object('coordinates', json_build_array(ST_X(${m}.location), ST_Y(${m}.location)), 'occurred', ${iso(`${m}.occurred`)},
                                  'accuracy', ${m}.accuracy, 'speed', ${m}.speed, 'heading', ${m}.heading, 'altitude', ${m}.altitude),
  'relationships', json_build_object('twin', json_build_object('data', json_build_object('type', 'twins', 'id', ${m}.id))))::text`;

/** An event's resource object, of the events row `e`. */
const eventJson = (e) => `json_build_object('type', 'events', 'id', ${e}.id, 'attributes', json_build_object(
  'name', ${e}.name, 'category', ${e}.category, 'data', ${e}.data, 'timestamp', ${iso(`${e}."timestamp"`)}, 'occurred', ${iso(`${e}.occurred`)}))::text`;

/** A time-ordered UUID (version 7) of the statement's millisecond, `seq` as its counter, the rest random. */
const uuidv7 = (seq) => `encode(overlay(overlay(uuid_send(gen_random_uuid())
    PLACING substring(int8send((extract(epoch FROM statement_timestamp()) * 1000)::bigint) FROM 3) FROM 1 FOR 6)
    PLACING int2send((x'7000'::int | (${seq} % 4096)::int)::smallint) FROM 7 FOR 2), 'hex')::uuid`;

/** A change row `c` as the event stream's NOTIFY payload (without its resource when that would not fit). */
const notifyPayload = (c) => `CASE WHEN octet_length(${c}.resource) <= ${NOTIFY_RESOURCE_MAX}
    THEN json_build_object('position', ${c}.position::text, 'kind', ${c}.kind, 'twin_id', ${c}.twin_id, 'subject_id', ${c}.subject_id, 'name', ${c}.name, 'category', ${c}.category, 'resource', ${c}.resource)
    ELSE json_build_object('position', ${c}.position::text, 'kind', ${c}.kind, 'twin_id', ${c}.twin_id, 'subject_id', ${c}.subject_id, 'name', ${c}.name, 'category', ${c}.category) END::text`;

/**
 * POST /twins/<id>/positions — $3 twin, $4..$10 the columns (occurred as sent, lon, lat, accuracy,
 * speed, heading, altitude). The twin is locked first (FOR NO KEY UPDATE: concurrent uploads of one twin
 * queue, so the newer always wins the move, and each sees where the other left the twin); the positions
 * of a twin the organization does not have are never inserted. Then, as the contract says:
 * - the twin moves to the newest stored position when that is newer than its location, and the move is
 *   a `twin.moved` change whose resource is that position;
 * - every stored position newer than where the twin was is a step of its path (from the location it had);
 *   a step into or out of one of the organization's geofences (`ST_Covers`; candidates by one GiST lookup,
 *   the box of the step's two points)
 *   is a `geofence.entered` / `geofence.exited` event of the twin's timeline (ids time-ordered in the
 *   order of `occurred`) and its change;
 * - every change is announced (pg_notify) in position order, the move's first, when the twin is streamed.
 */
const SQL_UPLOAD = `WITH ${AUTH},
tw AS MATERIALIZED (
  SELECT t.id, t.organization_id, t.location AS was_at, t.location_occurred AS was_occurred FROM twins t
   WHERE t.id = $3::uuid AND t.organization_id = (SELECT a.org FROM a)
     FOR NO KEY UPDATE),
stored AS (
  INSERT INTO positions (organization_id, twin_id, occurred, location, accuracy, speed, heading, altitude)
  SELECT tw.organization_id, tw.id, i.occurred, ST_SetSRID(ST_MakePoint(i.lon, i.lat), 4326), i.accuracy, i.speed, i.heading, i.altitude
    FROM tw, unnest($4::timestamptz[], $5::float8[], $6::float8[], $7::float8[], $8::float8[], $9::float8[], $10::float8[])
         AS i(occurred, lon, lat, accuracy, speed, heading, altitude)
  ON CONFLICT (organization_id, twin_id, occurred) DO NOTHING
  RETURNING occurred, location, accuracy, speed, heading, altitude),
newest AS (SELECT s.* FROM stored s ORDER BY s.occurred DESC LIMIT 1),
moved AS (
  UPDATE twins t SET location = n.location, location_occurred = n.occurred, modified = now()
    FROM newest n, tw
   WHERE t.id = tw.id AND (t.location_occurred IS NULL OR t.location_occurred < n.occurred)
  RETURNING t.id, t.organization_id, n.occurred, n.location, n.accuracy, n.speed, n.heading, n.altitude),
c AS (
  INSERT INTO changes (organization_id, twin_id, kind, subject_id, resource)
  SELECT m.organization_id, m.id, 'twin.moved', m.id, ${positionJson('m')} FROM moved m
  RETURNING position, kind, twin_id, subject_id, name, category, resource),
path AS (
  SELECT tw.organization_id, tw.id AS twin_id, s.occurred, s.location, coalesce(lag(s.location) OVER (ORDER BY s.occurred), tw.was_at) AS before
    FROM stored s, tw
   WHERE tw.was_occurred IS NULL OR s.occurred > tw.was_occurred),
crossed AS (
  SELECT p.organization_id, p.twin_id, p.occurred, p.location, g.id AS geofence, ST_Covers(g.geometry, p.location) AS entered,
         row_number() OVER (ORDER BY p.occurred, g.id) AS seq
    FROM path p JOIN geofences g ON g.organization_id = p.organization_id AND g.geometry && ST_Collect(p.location, coalesce(p.before, p.location))
   WHERE ST_Covers(g.geometry, p.location) <> coalesce(ST_Covers(g.geometry, p.before), false)),
ev AS (
  INSERT INTO events (id, organization_id, twin_id, name, category, data, occurred)
  SELECT ${uuidv7('x.seq')}, x.organization_id, x.twin_id, CASE WHEN x.entered THEN 'geofence.entered' ELSE 'geofence.exited' END, 'geofence',
         jsonb_build_object('twin', x.twin_id, 'geofence', x.geofence, 'coordinates', jsonb_build_array(ST_X(x.location), ST_Y(x.location))), x.occurred
    FROM crossed x ORDER BY x.seq
  RETURNING *),
gc AS (
  INSERT INTO changes (organization_id, twin_id, kind, subject_id, name, category, resource)
  SELECT e.organization_id, e.twin_id, e.name, e.id, e.name, e.category, ${eventJson('e')} FROM ev e ORDER BY e.id
  RETURNING position, kind, twin_id, subject_id, name, category, resource)
SELECT a.org, EXISTS (SELECT 1 FROM tw) AS own, (SELECT count(*) FROM stored)::int AS new,
       (SELECT count(*) FROM (SELECT CASE WHEN twin_is_streamed(x.twin_id) THEN pg_notify('${NOTIFY_CHANNEL}', ${notifyPayload('x')}) END FROM (SELECT * FROM c UNION ALL SELECT * FROM gc) x ORDER BY x.position) n) AS notified
  FROM a`;

/**
 * The positions of a track page, `size` + 1 of them (whether more follow), numbered in time order: the
 * primary key's index alone (it includes every column shown), each day partition's part in order, merged.
 * `cond` holds the range conditions the request has ($5.. after $4, the size).
 */
const pageCte = (cond) => `page AS MATERIALIZED (
  SELECT p.*, row_number() OVER (ORDER BY p.occurred) AS n FROM (
    SELECT p.occurred, p.location, p.accuracy, p.speed, p.heading, p.altitude FROM positions p
     WHERE p.organization_id = $2::uuid AND p.twin_id = $3::uuid ${cond} AND (SELECT a.org FROM a) IS NOT NULL
     ORDER BY p.occurred LIMIT $4::int + 1) p)`;

/** Whether the caller's organization has the twin (a track is its organization's alone, public twin or not). */
const OWN = `EXISTS (SELECT 1 FROM twins t WHERE t.id = $3::uuid AND t.organization_id = a.org)`;
const LAST = `(SELECT ${iso('p.occurred')} FROM page p WHERE p.n = $4::int)`;

/** A float8 column as a JSON number (PostgreSQL writes the shortest exact form, as JSON does), or null. */
const num = (column) => `coalesce(${column}::text, 'null')`;

/**
 * Point features, in rows of FEATURES_PER_PART (the `part`s, in order `g`); count and last on each row.
 * Each feature is concatenated text, not json_build_object: that builds each object by looking up how
 * to write each of its values, call after call, and cost 55 ms of PostgreSQL's time for a 10,000-feature
 * page where the concatenation costs 24 (the scan itself: 4).
 */
const trackPointsSql = (cond) => `WITH ${AUTH}, ${pageCte(cond)}
SELECT a.org, ${OWN} AS own, (SELECT count(*) FROM page)::int AS count, ${LAST} AS last, f.part, f.g::int AS g
  FROM a LEFT JOIN LATERAL (
    SELECT string_agg(concat('{"type":"Feature","geometry":{"type":"Point","coordinates":[', ST_X(p.location), ',', ST_Y(p.location),
             ']},"properties":{"occurred":"', ${iso('p.occurred')}, '","accuracy":', ${num('p.accuracy')}, ',"speed":', ${num('p.speed')},
             ',"heading":', ${num('p.heading')}, ',"altitude":', ${num('p.altitude')}, '}}'),
             ',' ORDER BY p.n) AS part, (p.n - 1) / ${FEATURES_PER_PART} AS g
      FROM page p WHERE p.n <= $4::int GROUP BY (p.n - 1) / ${FEATURES_PER_PART}) f ON true
 ORDER BY f.g`;

/** The page as one line: its coordinates and times as JSON array parts (rows in order `g`). */
const trackLineSql = (cond) => `WITH ${AUTH}, ${pageCte(cond)}
SELECT a.org, ${OWN} AS own, (SELECT count(*) FROM page)::int AS count, ${LAST} AS last, f.coordinates, f.times, f.g::int AS g
  FROM a LEFT JOIN LATERAL (
    SELECT string_agg('[' || ST_X(p.location) || ',' || ST_Y(p.location) || ']', ',' ORDER BY p.n) AS coordinates,
           string_agg('"' || ${iso('p.occurred')} || '"', ',' ORDER BY p.n) AS times,
           (p.n - 1) / ${FEATURES_PER_PART * 4} AS g
      FROM page p WHERE p.n <= $4::int GROUP BY (p.n - 1) / ${FEATURES_PER_PART * 4}) f ON true
 ORDER BY f.g`;

/** The page's vertices as rows, for a line to be thinned in Node (simplify). */
const trackVerticesSql = (cond) => `WITH ${AUTH}, ${pageCte(cond)}
SELECT a.org, ${OWN} AS own, (SELECT count(*) FROM page)::int AS count, ${LAST} AS last, v.lon, v.lat, v.at
  FROM a LEFT JOIN LATERAL (SELECT ST_X(p.location) AS lon, ST_Y(p.location) AS lat, ${iso('p.occurred')} AS at, p.n FROM page p WHERE p.n <= $4::int) v ON true
 ORDER BY v.n`;

// ---------------------------------------------------------------------------------------------------
// Errors, headers

class HttpError extends Error {
  constructor(status, code, detail, source, more) {
    super(detail);
    this.status = status;
    this.code = code;
    this.source = source;
    this.more = more;
  }
}
const badParameter = (parameter, detail) => new HttpError(400, 'invalid_parameter', detail, { parameter });
const badHeader = (header, detail) => new HttpError(400, 'invalid_header', detail, { header });
const badDocument = (pointer, detail) => new HttpError(400, 'invalid_document', detail, { pointer });
const noTwin = (id) => new HttpError(404, 'not_found', `No twin of your organization has the id ${id}.`);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const AUTHORIZATION = /^Token ([A-Za-z0-9_\-.~+/=]{1,512})$/i;

/** $1, $2 of every statement, after the checks that need no database. */
function credentials(request) {
  const token = typeof request.headers.authorization === 'string' ? AUTHORIZATION.exec(request.headers.authorization.trim())?.[1] : undefined;
  if (!token) throw new HttpError(401, 'not_authenticated', 'Send "Authorization: Token <ACCESS_TOKEN>".', { header: 'Authorization' });
  const organization = typeof request.headers['x-organization'] === 'string' ? request.headers['x-organization'].trim() : '';
  if (!organization) throw badHeader('X-Organization', 'Send "X-Organization: <ORG_ID>".');
  if (!UUID.test(organization)) throw badHeader('X-Organization', 'X-Organization must be an organization id (a UUID).');
  return [createHash('sha256').update(token, 'utf8').digest(), organization.toLowerCase()];
}

/** The verdicts of a statement's first row: 401, 403, or the row. */
function authorized(row) {
  if (!row) throw new HttpError(401, 'not_authenticated', 'The access token is unknown, revoked or expired.', { header: 'Authorization' });
  if (!row.org) throw new HttpError(403, 'forbidden', 'The account is not a member of that organization.', { header: 'X-Organization' });
  return row;
}

/** The twin id of the path: a UUID, lower case; anything else names no twin. */
function twinOf(request) {
  const id = request.params.id;
  if (!UUID.test(id)) throw noTwin(id);
  return id.toLowerCase();
}

// ---------------------------------------------------------------------------------------------------
// The upload document

const CALENDAR = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(?:Z|[+-](\d{2}):?(\d{2}))?)?$/;
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** A date (and time) that exists, in ISO 8601's form. */
function realDate(raw) {
  const m = CALENDAR.exec(raw);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = month === 2 && leap ? 29 : MONTH_DAYS[month - 1];
  const n = (i) => (m[i] === undefined ? 0 : Number(m[i]));
  return day <= days && n(4) <= 23 && n(5) <= 59 && n(6) <= 59 && n(7) <= 15 && n(8) <= 59;
}
/** An instant: seconds, at most microseconds, and an offset. */
const INSTANT = /T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:\d{2})$/;
const isInstant = (raw) => INSTANT.test(raw) && realDate(raw);

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);
const escapePointer = (name) => name.replace(/~/g, '~0').replace(/\//g, '~1');
const ATTRIBUTES = new Set(['coordinates', 'occurred', 'accuracy', 'speed', 'heading', 'altitude']);
const MEASURES = [
  ['accuracy', (v) => v >= 0, 'metres, 0 or more'],
  ['speed', (v) => v >= 0, 'metres per second, 0 or more'],
  ['heading', (v) => v >= 0 && v < 360, 'degrees from north, from 0 up to (not including) 360'],
  ['altitude', () => true, 'metres'],
];

/**
 * The upload's columns: `{occurred, lon, lat, accuracy, speed, heading, altitude}` arrays and the UTC days
 * named. Every problem of the document is collected (up to MAX_PROBLEMS) and refused together (400).
 */
function readUpload(body, now) {
  if (!isObject(body)) throw badDocument('', 'The document must be a JSON object {"data": [positions]}.');
  for (const name of Object.keys(body)) {
    if (name !== 'data' && name !== 'meta' && name !== 'jsonapi') throw badDocument(`/${escapePointer(name)}`, `Unknown member "${name}".`);
  }
  const data = body.data;
  if (!Array.isArray(data)) throw badDocument('/data', '"data" must be an array of positions.');
  if (data.length < 1 || data.length > MAX_POSITIONS) throw badDocument('/data', `"data" must hold 1 to ${MAX_POSITIONS} positions (${data.length} sent).`);
  const n = data.length;
  const columns = { occurred: new Array(n), lon: new Array(n), lat: new Array(n), accuracy: new Array(n), speed: new Array(n), heading: new Array(n), altitude: new Array(n) };
  const days = new Set();
  const problems = [];
  const problem = (pointer, detail) => problems.length < MAX_PROBLEMS && problems.push({ pointer, detail });
  const oldest = RETENTION_DAYS > 0 ? now - RETENTION_DAYS * DAY_MS : -Infinity;
  for (let i = 0; i < n; i++) {
    const at = `/data/${i}`;
    const resource = data[i];
    if (!isObject(resource)) {
      problem(at, 'A position must be an object {"type": "positions", "attributes": {…}}.');
      continue;
    }
    for (const member of Object.keys(resource)) {
      if (member === 'type' || member === 'attributes' || member === 'meta') continue;
      if (member === 'id' || member === 'lid') throw new HttpError(403, 'forbidden', 'Positions have no id.', { pointer: `${at}/${member}` });
      problem(`${at}/${escapePointer(member)}`, `Unknown member "${member}".`);
    }
    if (resource.type !== 'positions') {
      if (typeof resource.type === 'string') throw new HttpError(409, 'type_mismatch', '"type" must be "positions".', { pointer: `${at}/type` });
      problem(`${at}/type`, '"type" must be "positions".');
    }
    const attributes = resource.attributes;
    if (!isObject(attributes)) {
      problem(`${at}/attributes`, '"attributes" must be an object with "coordinates" and "occurred".');
      continue;
    }
    const a = `${at}/attributes`;
    for (const name of Object.keys(attributes)) if (!ATTRIBUTES.has(name)) problem(`${a}/${escapePointer(name)}`, `Unknown attribute "${name}".`);
    const c = attributes.coordinates;
    if (!Array.isArray(c) || c.length !== 2 || typeof c[0] !== 'number' || typeof c[1] !== 'number' || !Number.isFinite(c[0]) || !Number.isFinite(c[1])) {
      problem(`${a}/coordinates`, 'coordinates must be [longitude, latitude], two numbers.');
    } else {
      if (c[0] < -180 || c[0] > 180) problem(`${a}/coordinates/0`, 'The longitude must be from -180 to 180.');
      if (c[1] < -90 || c[1] > 90) problem(`${a}/coordinates/1`, 'The latitude must be from -90 to 90.');
      columns.lon[i] = c[0];
      columns.lat[i] = c[1];
    }
    const occurred = attributes.occurred;
    if (typeof occurred !== 'string' || !isInstant(occurred)) {
      problem(`${a}/occurred`, 'occurred must be an ISO 8601 timestamp with seconds and an offset, at most microseconds.');
    } else {
      const ms = Date.parse(occurred);
      if (ms > now + AHEAD_MS) problem(`${a}/occurred`, 'occurred is more than a day ahead.');
      else if (ms < oldest) problem(`${a}/occurred`, `occurred is older than the retention (${RETENTION_DAYS} days).`);
      columns.occurred[i] = occurred;
      days.add(Math.floor(ms / DAY_MS));
    }
    for (const [name, valid, rule] of MEASURES) {
      const value = attributes[name];
      if (value === undefined || value === null) columns[name][i] = null;
      else if (typeof value === 'number' && Number.isFinite(value) && valid(value)) columns[name][i] = value;
      else problem(`${a}/${name}`, `${name} must be null or a number: ${rule}.`);
    }
  }
  if (problems.length > 0) {
    const [first] = problems;
    throw new HttpError(400, 'invalid_document', first.detail, { pointer: first.pointer }, problems.slice(1));
  }
  return { columns, days };
}

// ---------------------------------------------------------------------------------------------------
// Day partitions

/** The UTC days (days since the epoch) that have a partition. */
const knownDays = new Set();
const dayText = (day) => new Date(day * DAY_MS).toISOString().slice(0, 10);

async function refreshDays() {
  const { rows } = await pool.query(`SELECT substr(c.relname, 11) AS day FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                                      WHERE i.inhparent = 'positions'::regclass AND c.relname ~ '^positions_[0-9]{8}$'`);
  knownDays.clear();
  for (const { day } of rows) knownDays.add(Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6, 8))) / DAY_MS);
}

/** Makes the partitions of the days an upload names that have none yet. */
async function ensureDays(days) {
  let missing = [...days].filter((day) => !knownDays.has(day));
  if (missing.length === 0) return;
  await refreshDays();
  missing = missing.filter((day) => !knownDays.has(day));
  if (missing.length === 0) return;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SELECT pg_advisory_xact_lock(${PARTITION_LOCK})`);
    for (const day of missing) {
      const name = `positions_${dayText(day).replace(/-/g, '')}`;
      await client.query(`CREATE TABLE IF NOT EXISTS ${name} PARTITION OF positions FOR VALUES FROM ('${dayText(day)} 00:00:00+00') TO ('${dayText(day + 1)} 00:00:00+00')`);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
  for (const day of missing) knownDays.add(day);
}

// ---------------------------------------------------------------------------------------------------
// Track queries, cursors, links

const CURSOR_KEY = createHash('sha256').update(process.env.CURSOR_SECRET ?? 'raw-positions-cursor-secret-0123456789').digest();
const signature = (payload) => createHmac('sha256', CURSOR_KEY).update(payload).digest().subarray(0, 16).toString('base64url');
const signCursor = (scope, position) => {
  const payload = Buffer.from(JSON.stringify([scope, position])).toString('base64url');
  return `${payload}.${signature(payload)}`;
};
function readCursor(scope, raw) {
  const refused = () => badParameter('page_after', 'page_after is not a cursor of this track.');
  const dot = raw.indexOf('.');
  if (dot <= 0) throw refused();
  const payload = raw.slice(0, dot);
  const given = Buffer.from(raw.slice(dot + 1));
  const expected = Buffer.from(signature(payload));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refused();
  let decoded;
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw refused();
  }
  if (!Array.isArray(decoded) || decoded[0] !== scope || !Array.isArray(decoded[1]) || typeof decoded[1][0] !== 'string' || !isInstant(decoded[1][0])) throw refused();
  return decoded[1][0];
}

const NUMBER = /^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*$/;
const TRACK_PARAMETERS = new Set(['since', 'until', 'page_after', 'page_size', 'format', 'simplify']);

/** The track's query: range, size, format, tolerance; 400 naming the parameter for anything malformed. */
function trackQuery(request) {
  const raw = request.raw.url;
  const at = raw.indexOf('?');
  const params = new URLSearchParams(at < 0 ? '' : raw.slice(at + 1));
  const query = {};
  for (const [name, value] of params) {
    if (!TRACK_PARAMETERS.has(name)) throw badParameter(name, `Unknown query parameter "${name}".`);
    if (name in query) throw badParameter(name, `${name} is given more than once.`);
    query[name] = value;
  }
  for (const name of ['since', 'until']) if (query[name] !== undefined && !realDate(query[name])) throw badParameter(name, `${name} must be an ISO 8601 timestamp.`);
  if (query.page_after !== undefined && (query.page_after.length === 0 || query.page_after.length > 1000)) throw badParameter('page_after', 'page_after is not a cursor of this track.');
  let size = TRACK_DEFAULT_SIZE;
  if (query.page_size !== undefined) {
    size = /^[1-9][0-9]{0,5}$/.test(query.page_size) ? Number(query.page_size) : NaN;
    if (!(size <= TRACK_MAX_SIZE)) throw badParameter('page_size', `page_size must be a whole number from 1 to ${TRACK_MAX_SIZE}.`);
  }
  if (query.format !== undefined && query.format !== 'points' && query.format !== 'line') throw badParameter('format', 'format must be one of: points, line.');
  let simplify;
  if (query.simplify !== undefined) {
    simplify = NUMBER.test(query.simplify) ? Number(query.simplify) : NaN;
    if (!Number.isFinite(simplify) || simplify < 0 || simplify > 20_037_509) throw badParameter('simplify', 'simplify must be a number from 0 to 20037509.');
  }
  if (query.since !== undefined && query.until !== undefined && Date.parse(query.since) >= Date.parse(query.until)) throw badParameter('until', 'until must be later than since.');
  if (simplify !== undefined && query.format !== 'line') throw badParameter('simplify', 'simplify needs format=line.');
  return { since: query.since, until: query.until, after: query.page_after, size, line: query.format === 'line', simplify };
}

/** Statement texts per shape (which range conditions), built once. */
const texts = new Map();
function statement(kind, q, after) {
  const key = `${kind}-${q.since !== undefined ? 's' : ''}${q.until !== undefined ? 'u' : ''}${after !== undefined ? 'a' : ''}`;
  let text = texts.get(key);
  if (text === undefined) {
    let n = 4;
    const cond = [
      q.since !== undefined ? `AND p.occurred >= $${++n}::timestamptz` : '',
      q.until !== undefined ? `AND p.occurred < $${++n}::timestamptz` : '',
      after !== undefined ? `AND p.occurred > $${++n}::timestamptz` : '',
    ].join(' ');
    text = kind === 'points' ? trackPointsSql(cond) : kind === 'line' ? trackLineSql(cond) : trackVerticesSql(cond);
    texts.set(key, text);
  }
  return { name: `track-${key}`, text };
}

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

/** The links of a page: itself, and the next page (the request with page_after set) when more follow. */
function trackLinks(request, cursor) {
  const self = new URL(request.url, `${originOf(request)}/`);
  const links = [{ href: self.href, rel: 'self', type: GEO_JSON }];
  if (cursor !== null) {
    const next = new URL(self.href);
    next.searchParams.set('page_after', cursor);
    links.push({ href: next.href, rel: 'next', type: GEO_JSON });
  }
  return JSON.stringify(links);
}

const collection = (request, features, returned, cursor) =>
  `{"type":"FeatureCollection","features":${features},"numberReturned":${returned},"timeStamp":"${new Date().toISOString().replace('Z', '000Z')}","links":${trackLinks(request, cursor)}}`;

// Douglas–Peucker in metres: each chord in an equirectangular projection centred on its mean latitude.
const EARTH = 6_371_008.8;
const RAD = Math.PI / 180;
const wrap = (d) => ((((d + 180) % 360) + 360) % 360) - 180;
function offChord(lon, lat, i, a, b) {
  const k = Math.cos(((lat[a] + lat[b]) / 2) * RAD) * RAD * EARTH;
  const bx = wrap(lon[b] - lon[a]) * k;
  const by = (lat[b] - lat[a]) * RAD * EARTH;
  const px = wrap(lon[i] - lon[a]) * k;
  const py = (lat[i] - lat[a]) * RAD * EARTH;
  const l2 = bx * bx + by * by;
  const t = l2 === 0 ? 0 : Math.min(1, Math.max(0, (px * bx + py * by) / l2));
  return Math.hypot(px - t * bx, py - t * by);
}
function thin(lon, lat, tolerance) {
  const n = lon.length;
  const keep = new Uint8Array(n).fill(n <= 2 || tolerance <= 0 ? 1 : 0);
  if (n > 2 && tolerance > 0) {
    keep[0] = keep[n - 1] = 1;
    const spans = [0, n - 1];
    while (spans.length > 0) {
      const b = spans.pop();
      const a = spans.pop();
      let far = -1;
      let farthest = tolerance;
      for (let i = a + 1; i < b; i++) {
        const d = offChord(lon, lat, i, a, b);
        if (d > farthest) [farthest, far] = [d, i];
      }
      if (far < 0) continue;
      keep[far] = 1;
      spans.push(a, far, far, b);
    }
  }
  return keep;
}

// ---------------------------------------------------------------------------------------------------
// Routes

const app = Fastify({ logger: false, bodyLimit: 1024 * 1024, routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 } });
app.removeAllContentTypeParsers();
app.addContentTypeParser(['application/vnd.api+json', 'application/json'], { parseAs: 'string' }, (_request, body, done) => {
  try {
    done(null, body === '' ? undefined : JSON.parse(body));
  } catch {
    done(new HttpError(400, 'invalid_json', 'The body is not valid JSON.', { pointer: '' }));
  }
});
app.addHook('onRequest', (_request, reply, done) => {
  reply.header('x-request-id', randomUUID());
  done();
});
app.addHook('onSend', (_request, reply, _payload, done) => {
  reply.header('x-content-type-options', 'nosniff');
  reply.header('x-frame-options', 'DENY');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
  done();
});
app.setErrorHandler((error, _request, reply) => {
  const status = error.status ?? error.statusCode ?? 500;
  if (status >= 500 || process.env.BENCH_RAW_DEBUG) process.stderr.write(`raw positions: ${status} ${error.code ?? ''} ${error.message}\n`);
  const one = (detail, source) => ({ status: String(status), code: error.code && status < 500 ? String(error.code).toLowerCase() : 'error', detail, ...(source ? { source } : {}) });
  const errors = [one(status >= 500 ? 'Internal error.' : error.message, error.source), ...(error.more ?? []).map((p) => one(p.detail, { pointer: p.pointer }))];
  reply.status(status).header('content-type', JSON_API).send(JSON.stringify({ errors }));
});

/** A GET answer: a strong ETag of its bytes, 304 when If-None-Match names it; big bodies as a Buffer. */
function sendGet(request, reply, text, type) {
  const body = text.length > 65536 ? Buffer.from(text, 'utf8') : text;
  const etag = `"h${createHash('sha1').update(body).digest('base64url')}"`;
  reply.header('vary', 'Accept-Encoding');
  const match = request.headers['if-none-match'];
  if (typeof match === 'string' && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) return reply.status(304).header('etag', etag).send();
  return reply.status(200).header('etag', etag).header('content-type', type).send(body);
}

app.post('/twins/:id/positions', async (request, reply) => {
  const auth = credentials(request);
  const twin = twinOf(request);
  const { columns, days } = readUpload(request.body, Date.now());
  await ensureDays(days);
  const { rows } = await pool.query({
    name: 'positions-upload',
    text: SQL_UPLOAD,
    values: [...auth, twin, columns.occurred, columns.lon, columns.lat, columns.accuracy, columns.speed, columns.heading, columns.altitude],
  });
  const row = authorized(rows[0]);
  if (!row.own) throw noTwin(twin);
  reply.status(200).header('content-type', JSON_API);
  return `{"meta":{"received":${columns.occurred.length},"new":${row.new}}}`;
});

app.get('/twins/:id/track', async (request, reply) => {
  const auth = credentials(request);
  const twin = twinOf(request);
  const q = trackQuery(request);
  const scope = `track:${twin}`;
  const after = q.after === undefined ? undefined : readCursor(scope, q.after);
  const kind = !q.line ? 'points' : q.simplify === undefined ? 'line' : 'vertices';
  const values = [...auth, twin, q.size];
  if (q.since !== undefined) values.push(q.since);
  if (q.until !== undefined) values.push(q.until);
  if (after !== undefined) values.push(after);
  const { rows } = await pool.query({ ...statement(kind, q, after), values });
  const head = authorized(rows[0]);
  if (!head.own) throw noTwin(twin);
  const returned = Math.min(head.count, q.size);
  const cursor = head.count > q.size && head.last ? signCursor(scope, [head.last]) : null;
  let features;
  if (returned === 0) {
    features = '[]';
  } else if (kind === 'points') {
    features = `[${rows.map((r) => r.part).join(',')}]`;
  } else if (kind === 'line') {
    const geometry = returned === 1 ? `{"type":"Point","coordinates":${rows[0].coordinates}}` : `{"type":"LineString","coordinates":[${rows.map((r) => r.coordinates).join(',')}]}`;
    features = `[{"type":"Feature","geometry":${geometry},"properties":{"times":[${rows.map((r) => r.times).join(',')}],"positions":${returned}}}]`;
  } else {
    const lon = rows.map((r) => r.lon);
    const lat = rows.map((r) => r.lat);
    const keep = thin(lon, lat, q.simplify);
    const coordinates = [];
    const times = [];
    for (let i = 0; i < rows.length; i++) {
      if (!keep[i]) continue;
      coordinates.push(`[${lon[i]},${lat[i]}]`);
      times.push(`"${rows[i].at}"`);
    }
    const geometry = coordinates.length === 1 ? `{"type":"Point","coordinates":${coordinates[0]}}` : `{"type":"LineString","coordinates":[${coordinates.join(',')}]}`;
    features = `[{"type":"Feature","geometry":${geometry},"properties":{"times":[${times.join(',')}],"positions":${returned}}}]`;
  }
  return sendGet(request, reply, collection(request, features, kind === 'points' ? returned : returned === 0 ? 0 : 1, cursor), GEO_JSON);
});

app.get('/health', (_request, reply) => reply.header('content-type', 'application/json; charset=utf-8').send('{"status":"ok"}'));

await refreshDays();
await app.listen({ port: Number(process.env.PORT ?? 3321), host: '127.0.0.1' });

const stop = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
