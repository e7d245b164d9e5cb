// `node bench/geofences.mjs`: what geofence crossings cost a batch of positions. On the million-twin bench
// database (twin_bench_full), the service (production build, dist/, its own PORT, METRICS_PORT=0) serves two
// organizations made alike for this run (an account, a token, 808 twins each): A without geofences, B with
// --geofences (1,000) made through POST /geofences/ (polygons of 5–200 vertices, ~15 % with a hole, radii
// 40–450 m, spread over the 0.2° × 0.1° of Paris the twins walk in, overlapping: a share of positions falls
// inside). Then, per round, for each cell (mode × connections), A and B in turn (the first alternating from
// round to round), so the machine's noise hits both alike:
//   one: batches of --batch (1,000) positions of one twin, POST /twins/<id>/positions (a twin per connection)
//   ops: 100 twins × 10 positions in POST /operations (100 twins per connection)
// closed loops at --connections (1,8), --seconds (15) each after --warmup (3): batches/s, positions/s,
// p50/p99, errors, the crossings recorded (changes of kind geofence.entered/exited) and the CPU split; then
// the cost ratio B/A (A's batches/s over B's). Each twin walks ~12 m a position (straight, bouncing off the
// area's edges), each position newer than the last, so every position is checked and crossings happen.
// After the rounds: EXPLAIN (ANALYZE, BUFFERS) of the service's own statement (taken from dist/) on a
// batch of each mode in B and A (rolled back): how long finding the crossings takes (the CTEs that look the
// geofences up on the GiST index and test the points) against writing them (the events CTE); and pg_stat_statements when the
// server has it loaded.
//
// Options: --rounds (3), --seconds, --warmup, --connections, --geofences, --port (3340), --database
// (twin_bench_full), --label, --no-build, --keep (leave the organizations), --new-results.
// Machine load: the load averages are read before each round and recorded; nothing waits for a quiet machine.
// Everything it makes is removed at the end (and an interrupted run's leftovers at the start): the
// organizations named `Bench geofences …` with their twins, positions, events, changes, geofences, and the
// account `Bench geofences` with its token. Results: bench/results/geofences.json (runs appended), a table.
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { flag, option } from './lib/args.mjs';
import { BENCH_CURSOR_SECRET, SERVICE_NODE_OPTIONS, assertPortFree, stopServer, waitReady } from './lib/servers.mjs';
import { closedLoop, cpuSplit, device } from './lib/fleet-load.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const log = (line) => process.stderr.write(`${line}\n`);
const num = (name, fallback) => Number(option(name, fallback));
const settings = {
  rounds: num('rounds', 3),
  seconds: num('seconds', 15),
  warmup: num('warmup', 3),
  connections: option('connections', '1,8').split(',').map(Number),
  geofences: num('geofences', 1000),
  batch: num('batch', 1000),
};
const PORT = num('port', 3340);
const base = (process.env.PGURL_BASE ?? 'postgresql://postgres@127.0.0.1:5432').replace(/\/$/, '');
const database = option('database', 'twin_bench_full');
const url = `${base}/${database}`;
const label = option('label', new Date().toISOString().slice(0, 16));
const ORG_PREFIX = 'Bench geofences ';
const ACCOUNT = 'Bench geofences';
const JSONAPI = 'application/vnd.api+json';
const ATOMIC = 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"';
const MAX_CONNECTIONS = Math.max(...settings.connections);
const OPS_TWINS = 100;
const r2 = (v) => (v === null || v === undefined || !Number.isFinite(v) ? null : Math.round(v * 100) / 100);
/** The machine's load averages (1, 5, 15 min), as `uptime` prints them. */
const uptime = () => `load average: ${loadavg().map((v) => v.toFixed(2)).join(', ')}`;

// The area the twins walk in, and metres as degrees there.
const AREA = { lon0: 2.25, lon1: 2.45, lat0: 48.8, lat1: 48.9 };
const M_LAT = 1 / 111_320;
const M_LON = 1 / (111_320 * Math.cos((48.85 * Math.PI) / 180));

/** A seeded PRNG (mulberry32): the same geofences and walks every run. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `count` geofences: each a star-shaped ring around a centre (vertices at increasing angles, radius 0.7–1 ×
 * r, so the ring is simple), 5–200 vertices, r 40–450 m (small ones more often), ~15 % with a hole (a regular
 * ring of 0.3 r around the centre, inside the shell's 0.7 r), ~5 % a MultiPolygon of two such shells.
 */
export function makeGeofences(count, seed = 7) {
  const rnd = prng(seed);
  const round7 = (v) => Math.round(v * 1e7) / 1e7;
  const ring = (cx, cy, r, n, jitter) => {
    const out = [];
    for (let k = 0; k < n; k++) {
      const angle = ((k + (jitter ? rnd() * 0.8 : 0)) / n) * 2 * Math.PI;
      const rr = r * (jitter ? 0.7 + 0.3 * rnd() : 1);
      out.push([round7(cx + Math.cos(angle) * rr * M_LON), round7(cy + Math.sin(angle) * rr * M_LAT)]);
    }
    out.push(out[0]);
    return out;
  };
  const shapes = [];
  let vertices = 0;
  let holes = 0;
  for (let i = 0; i < count; i++) {
    const polygon = (cx, cy) => {
      const r = 40 + 410 * rnd() ** 2;
      const n = 5 + Math.floor(196 * rnd() ** 1.5);
      const rings = [ring(cx, cy, r, n, true)];
      if (rnd() < 0.15) {
        // A hole, counter-rotated (any orientation is valid for PostGIS).
        rings.push(ring(cx, cy, 0.3 * r, 5 + Math.floor(rnd() * 20), false).reverse());
        holes++;
      }
      vertices += rings.reduce((s, x) => s + x.length - 1, 0);
      return rings;
    };
    const cx = AREA.lon0 + rnd() * (AREA.lon1 - AREA.lon0);
    const cy = AREA.lat0 + rnd() * (AREA.lat1 - AREA.lat0);
    const geometry =
      rnd() < 0.05 ? { type: 'MultiPolygon', coordinates: [polygon(cx, cy), polygon(cx + 1200 * M_LON, cy + 300 * M_LAT)] } : { type: 'Polygon', coordinates: polygon(cx, cy) };
    shapes.push({ name: `Bench geofence ${String(i).padStart(4, '0')}`, geometry });
  }
  return { shapes, vertices, holes };
}

/** A twin walking ~12 m a position across the area, bouncing off its edges; `count` positions a call, each `stepMs` after the last. */
function walker(seed, startMs, stepMs) {
  const rnd = prng(seed);
  let lon = AREA.lon0 + rnd() * (AREA.lon1 - AREA.lon0);
  let lat = AREA.lat0 + rnd() * (AREA.lat1 - AREA.lat0);
  let heading = rnd() * 2 * Math.PI;
  let at = startMs;
  const start = [lon, lat];
  const next = (count) => {
    const out = new Array(count);
    for (let k = 0; k < count; k++) {
      at += stepMs;
      heading += (rnd() - 0.5) * 0.1;
      lon += Math.sin(heading) * 12 * M_LON;
      lat += Math.cos(heading) * 12 * M_LAT;
      if (lon < AREA.lon0 || lon > AREA.lon1) heading = -heading;
      if (lat < AREA.lat0 || lat > AREA.lat1) heading = Math.PI - heading;
      out[k] = [Math.round(lon * 1e7) / 1e7, Math.round(lat * 1e7) / 1e7, new Date(at).toISOString()];
    }
    return out;
  };
  return { start, next };
}

const attributes = ([lon, lat, occurred]) => `{"coordinates":[${lon},${lat}],"occurred":"${occurred}","accuracy":5,"speed":12,"heading":90}`;
const uploadBody = (positions) => `{"data":[${positions.map((p) => `{"type":"positions","attributes":${attributes(p)}}`).join(',')}]}`;
const operationsBody = (parts) =>
  `{"atomic:operations":[${parts
    .flatMap(([twin, positions]) => positions.map((p) => `{"op":"add","data":{"type":"positions","attributes":${attributes(p)},"relationships":{"twin":{"data":{"type":"twins","id":"${twin}"}}}}}`))
    .join(',')}]}`;
const parse = (text) => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

// ---------------------------------------------------------------------------------------------------
// Data

async function connect() {
  const client = new pg.Client({ connectionString: url, application_name: 'bench-geofences', options: '-c TimeZone=UTC' });
  await client.connect();
  return client;
}

/** Removes every organization of this bench (and its rows), the account and its tokens. */
async function cleanup(db) {
  const started = Date.now();
  const orgs = (await db.query(`SELECT coalesce(array_agg(id), '{}') AS ids FROM organizations WHERE name LIKE $1`, [`${ORG_PREFIX}%`])).rows[0].ids;
  const counts = { organizations: orgs.length };
  if (orgs.length > 0) {
    counts.positions = (await db.query(`DELETE FROM positions WHERE organization_id = ANY ($1::uuid[])`, [orgs])).rowCount;
    counts.changes = (await db.query(`DELETE FROM changes WHERE organization_id = ANY ($1::uuid[])`, [orgs])).rowCount;
    counts.events = (await db.query(`DELETE FROM events WHERE organization_id = ANY ($1::uuid[])`, [orgs])).rowCount;
    counts.geofences = (await db.query(`DELETE FROM geofences WHERE organization_id = ANY ($1::uuid[])`, [orgs])).rowCount;
    counts.twins = (await db.query(`DELETE FROM twins WHERE organization_id = ANY ($1::uuid[])`, [orgs])).rowCount;
    await db.query(`DELETE FROM organizations WHERE id = ANY ($1::uuid[])`, [orgs]);
  }
  counts.accounts = (await db.query(`DELETE FROM accounts WHERE name = $1`, [ACCOUNT])).rowCount; // memberships, tokens: ON DELETE CASCADE
  if (orgs.length > 0) await db.query(`VACUUM ANALYZE twins, changes, events, positions, geofences`);
  counts.seconds = Math.round((Date.now() - started) / 1000);
  return counts;
}

/** The two organizations, alike: 808 twins each (8 for `one`, 800 for `ops`), located where their walks start. */
async function makeTenants(db, dayStart) {
  const account = (await db.query(`INSERT INTO accounts (name) VALUES ($1) RETURNING id`, [ACCOUNT])).rows[0].id;
  const token = `tw_bench${randomBytes(24).toString('base64url')}`;
  await db.query(`INSERT INTO access_tokens (account_id, token_hash) VALUES ($1, $2)`, [account, createHash('sha256').update(token).digest()]);
  const tenants = {};
  for (const [key, name] of [['A', 'without geofences'], ['B', `with ${settings.geofences} geofences`]]) {
    const organizationId = (await db.query(`INSERT INTO organizations (name) VALUES ($1) RETURNING id`, [`${ORG_PREFIX}${key} ${name}`])).rows[0].id;
    await db.query(`INSERT INTO memberships (account_id, organization_id) VALUES ($1, $2)`, [account, organizationId]);
    const count = MAX_CONNECTIONS * (1 + OPS_TWINS);
    // Twin i of A and twin i of B walk the same walk (same seed), B's shifted by nothing: the same positions.
    const walks = Array.from({ length: count }, (_, i) => walker(1000 + i, dayStart + (i % 1000), 5));
    const ids = (await db.query(
      `INSERT INTO twins (organization_id, name, description, location, characteristics)
       SELECT $1, 'Bench geofences twin ' || lpad(i::text, 4, '0'), 'A twin of bench/geofences.mjs', ST_SetSRID(ST_MakePoint(($2::float8[])[i], ($3::float8[])[i]), 4326), ARRAY['outdoors']
         FROM generate_series(1, $4::int) i ORDER BY i RETURNING id`,
      [organizationId, walks.map((w) => w.start[0]), walks.map((w) => w.start[1]), count],
    )).rows.map((r) => r.id);
    tenants[key] = {
      key,
      organizationId,
      headers: { authorization: `Token ${token}`, 'x-organization': organizationId },
      one: ids.slice(0, MAX_CONNECTIONS).map((id, i) => ({ id, walk: walks[i] })),
      ops: Array.from({ length: MAX_CONNECTIONS }, (_, c) => ids.slice(MAX_CONNECTIONS + c * OPS_TWINS, MAX_CONNECTIONS + (c + 1) * OPS_TWINS).map((id, j) => ({ id, walk: walks[MAX_CONNECTIONS + c * OPS_TWINS + j] }))),
    };
  }
  return tenants;
}

async function createGeofences(t) {
  const { shapes, vertices, holes } = makeGeofences(settings.geofences);
  const queue = [...shapes];
  const failures = [];
  const started = Date.now();
  await Promise.all(
    [0, 1, 2, 3].map(async () => {
      const d = device(PORT);
      while (queue.length > 0) {
        const shape = queue.shift();
        const a = await d.send('POST', '/geofences/', { ...t.headers, 'content-type': JSONAPI }, JSON.stringify({ data: { type: 'geofences', attributes: shape } }));
        if (a.status !== 201 && a.status !== 200) failures.push(`${shape.name}: ${a.status} ${a.text.slice(0, 200)}`);
      }
      d.close();
    }),
  );
  if (failures.length > 0) throw new Error(`geofences refused (${failures.length}):\n${failures.slice(0, 5).join('\n')}`);
  return { count: shapes.length, vertices, holes, multiPolygons: shapes.filter((s) => s.geometry.type === 'MultiPolygon').length, seconds: r2((Date.now() - started) / 1000) };
}

/** What share of the area the geofences cover, and of a sample of walk positions inside one. */
async function coverage(db, t) {
  const { rows } = await db.query(
    `SELECT round((ST_Area(ST_Union(geometry)) / ST_Area(ST_MakeEnvelope($2, $3, $4, $5, 4326)))::numeric, 3)::float8 AS covered,
            (SELECT count(*) FROM geofences WHERE organization_id = $1)::int AS n
       FROM geofences WHERE organization_id = $1`,
    [t.organizationId, AREA.lon0, AREA.lat0, AREA.lon1, AREA.lat1],
  );
  return { areaShareCovered: rows[0].covered, geofences: rows[0].n };
}

async function crossings(db, t) {
  const { rows } = await db.query(
    `SELECT count(*) FILTER (WHERE kind = 'geofence.entered')::int AS entered, count(*) FILTER (WHERE kind = 'geofence.exited')::int AS exited
       FROM changes WHERE organization_id = $1 AND kind IN ('geofence.entered', 'geofence.exited')`,
    [t.organizationId],
  );
  return rows[0];
}

// ---------------------------------------------------------------------------------------------------
// Service

function startService() {
  const child = spawn(process.execPath, [join(root, 'dist/src/main.js')], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'production', DATABASE_URL: url, CURSOR_SECRET: BENCH_CURSOR_SECRET, NODE_OPTIONS: SERVICE_NODE_OPTIONS, PORT: String(PORT), METRICS_PORT: '0', HOST: '127.0.0.1', RATE_LIMIT_MAX: '0', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', process.env.BENCH_VERBOSE ? 'inherit' : 'pipe'],
  });
  let tail = '';
  child.stderr?.on('data', (chunk) => (tail = (tail + chunk).slice(-3000)));
  child.tail = () => tail;
  return child;
}

async function settle(db) {
  for (let quiet = 0, n = 0; quiet < 3 && n < 600; n++) {
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle' AND application_name = 'twin-service'`);
    quiet = rows[0].n === 0 ? quiet + 1 : 0;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One cell of one organization: a closed loop of `connections`. */
async function measure(db, pid, t, mode, connections) {
  const per = settings.batch / OPS_TWINS;
  const next =
    mode === 'one'
      ? (i) => ({ method: 'POST', path: `/twins/${t.one[i].id}/positions`, headers: { ...t.headers, 'content-type': JSONAPI }, body: uploadBody(t.one[i].walk.next(settings.batch)) })
      : (i) => ({ method: 'POST', path: '/operations', headers: { ...t.headers, 'content-type': ATOMIC }, body: operationsBody(t.ops[i].map((w) => [w.id, w.walk.next(per)])) });
  const ok = (a) => {
    if (a.status !== 200) return false;
    const meta = parse(a.text)?.meta;
    return (mode === 'one' ? meta?.new : meta?.positions?.new) ?? false;
  };
  const before = await crossings(db, t);
  let stop;
  let cpu;
  const r = await closedLoop({
    port: PORT,
    devices: connections,
    warmup: settings.warmup,
    seconds: settings.seconds,
    next,
    ok,
    onWindow: (edge) => (edge === 'open' ? (stop = cpuSplit(pid)) : (cpu = stop?.())),
  });
  await settle(db);
  const after = await crossings(db, t);
  return {
    batchesPerSecond: r.perSecond,
    positionsPerSecond: r.unitsPerSecond,
    p50: r.p50,
    p99: r.p99,
    max: r.max,
    errors: r.errors,
    errorKinds: r.errorKinds,
    crossings: after.entered + after.exited - before.entered - before.exited,
    cpu,
    postgresMsPerBatch: r.perSecond > 0 && cpu ? r2((cpu.postgresCores / r.perSecond) * 1000) : null,
    serverMsPerBatch: r.perSecond > 0 && cpu ? r2((cpu.serverCores / r.perSecond) * 1000) : null,
  };
}

// ---------------------------------------------------------------------------------------------------
// The statement, explained

/** The built PositionsRepository and GeofenceIndex, loaded when the service starts (the build in dist/ is shared: another build may replace it meanwhile). */
let PositionsRepository;
let GeofenceIndex;
async function loadRepository() {
  await import('reflect-metadata');
  ({ PositionsRepository } = await import(pathToFileURL(join(root, 'dist/src/twins/positions/positions.repository.js')).href));
  ({ GeofenceIndex } = await import(pathToFileURL(join(root, 'dist/src/geofences/geofence-index.js')).href));
}

/**
 * The service's own SQL and parameters for a batch (PositionsRepository.record, from dist/, with a recording
 * `sql`), with the crossings the service finds among the organization's geofences it holds
 * (geofence-index.ts, fed here by the bench's own query) once it loaded them: what every batch after an
 * organization's first is recorded with.
 */
async function recordStatement(db, organizationId, twinIds, positions) {
  const { version } = (await db.query(`SELECT (SELECT version::text FROM geofence_sets WHERE organization_id = $1) AS version`, [organizationId])).rows[0];
  let held;
  if (version !== null) {
    const rows = (await db.query(`SELECT id, ST_AsBinary(geometry) AS wkb FROM geofences WHERE organization_id = $1`, [organizationId])).rows;
    const index = new GeofenceIndex({ shapes: async () => ({ version, vertices: 0, rows }) });
    index.observed(organizationId, version);
    await index.settled();
    held = index.crossingsOf(organizationId, twinIds, positions);
  }
  let captured;
  const repository = new PositionsRepository({ rows: async (_shape, text, values) => ((captured = { text, values }), []) });
  await repository.record(organizationId, twinIds, positions, null, held);
  return captured;
}


/**
 * The crossing search of a JSON plan: the materialized CTEs `geofence_points` (the paths), `geofence_candidates`
 * (one GiST lookup per chunk of points) and `geofence_insides` (each point against its chunk's geofences),
 * each with its time (a CTE's time includes the CTEs it reads first, so the search is the largest), and
 * their nodes flattened: type, index, conditions, rows, loops, time, buffers; and the events CTE (writing
 * the crossings).
 */
function crossingPart(plan) {
  const subplans = plan.Plan.Plans ?? [];
  const cte = (name) => subplans.find((p) => p['Subplan Name'] === `CTE ${name}`);
  const search = ['geofence_held', 'geofence_points', 'geofence_candidates', 'geofence_insides'].map((name) => ({ name, node: cte(name) })).filter((c) => c.node);
  const nodes = [];
  const walk = (node, depth) => {
    nodes.push({
      depth,
      node: node['Node Type'],
      relation: node['Relation Name'],
      index: node['Index Name'],
      cond: node['Index Cond'] ?? node['Join Filter'] ?? node['Hash Cond'] ?? node.Filter ?? node['Recheck Cond'],
      planRows: node['Plan Rows'],
      rows: node['Actual Rows'],
      loops: node['Actual Loops'],
      totalMs: node['Actual Total Time'],
      hit: node['Shared Hit Blocks'],
      read: node['Shared Read Blocks'],
      removedByFilter: node['Rows Removed by Filter'] ?? node['Rows Removed by Join Filter'] ?? node['Rows Removed by Index Recheck'],
    });
    for (const child of node.Plans ?? []) walk(child, depth + 1);
  };
  for (const { node } of search) walk(node, 0);
  return {
    eventsCteMs: cte('geofence_events')?.['Actual Total Time'],
    // Every CTE of the statement with its time (where it ran first: reading an upstream CTE includes it).
    ctes: Object.fromEntries(subplans.filter((p) => p['Subplan Name']?.startsWith('CTE ')).map((p) => [p['Subplan Name'].slice(4), r2(p['Actual Total Time'])])),
    searchMs: Object.fromEntries(search.map(({ name, node }) => [name, r2(node['Actual Total Time'])])),
    insides: cte('geofence_insides')?.['Actual Rows'],
    nodes,
  };
}

async function explain(db, t, mode) {
  const dayStartMs = Math.floor(Date.now() / 86_400_000) * 86_400_000;
  // Fresh walks (new twins of the organization, located where they start), so every position is checked.
  const twins = mode === 'one' ? 1 : OPS_TWINS;
  const per = settings.batch / twins;
  const walks = Array.from({ length: twins }, (_, i) => walker(90_000 + i, dayStartMs + 3_600_000 + i, 5));
  await db.query('BEGIN');
  try {
    const ids = (await db.query(
      `INSERT INTO twins (organization_id, name, location) SELECT $1, 'Bench geofences explain', ST_SetSRID(ST_MakePoint(($2::float8[])[i], ($3::float8[])[i]), 4326)
         FROM generate_series(1, $4::int) i ORDER BY i RETURNING id`,
      [t.organizationId, walks.map((w) => w.start[0]), walks.map((w) => w.start[1]), twins],
    )).rows.map((r) => r.id);
    const twinIds = [];
    const positions = [];
    walks.forEach((w, i) =>
      w.next(per).forEach(([lon, lat, occurred]) => {
        twinIds.push(ids[i]);
        positions.push({ lon, lat, occurred, occurredMs: Date.parse(occurred), accuracy: 5, speed: 12, heading: 90, altitude: null });
      }),
    );
    const statement = await recordStatement(db, t.organizationId, twinIds, positions);
    const text = statement.text;
    await db.query('SAVEPOINT x');
    const json = (await db.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, statement.values)).rows[0]['QUERY PLAN'][0];
    await db.query('ROLLBACK TO SAVEPOINT x');
    const plain = (await db.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${text}`, statement.values)).rows.map((r) => r['QUERY PLAN']);
    const from = plain.findIndex((l) => l.includes('CTE geofence_events'));
    const to = plain.findIndex((l, i) => i > from && /^\s{0,4}CTE /.test(l));
    const { eventsCteMs, searchMs, insides, ctes, nodes } = crossingPart(json);
    return {
      mode,
      positions: positions.length,
      twins,
      executionMs: r2(json['Execution Time']),
      planningMs: r2(json['Planning Time']),
      // Finding the crossings (before they are written), the points found inside a geofence, and the whole events CTE.
      crossingSearchMs: Math.max(0, ...Object.values(searchMs)),
      searchMs,
      insides,
      ctes,
      triggers: (json.Triggers ?? []).map((t) => ({ name: t['Trigger Name'], relation: t.Relation, ms: r2(t.Time), calls: t.Calls })),
      eventsCteMs: r2(eventsCteMs),
      gistScans: nodes.filter((n) => n.index?.startsWith('geofences_')).map((n) => ({ node: n.node, cond: n.cond, loops: n.loops, rows: n.rows })),
      nodes,
      text: from >= 0 ? plain.slice(from, to > from ? to : from + 40) : plain,
    };
  } finally {
    await db.query('ROLLBACK');
  }
}

async function statStatements(db) {
  const present = (await db.query(`SELECT current_setting('shared_preload_libraries') AS libs, EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements') AS ext`)).rows[0];
  if (!present.libs.includes('pg_stat_statements') || !present.ext) return { available: false, sharedPreloadLibraries: present.libs, extension: present.ext };
  const { rows } = await db.query(
    `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query, calls, round(mean_exec_time::numeric, 2)::float8 AS mean_ms, round(total_exec_time::numeric)::float8 AS total_ms, shared_blks_hit, shared_blks_read
       FROM pg_stat_statements WHERE query LIKE '%geofence_crossings%' ORDER BY total_exec_time DESC LIMIT 5`,
  );
  return { available: true, rows };
}

// ---------------------------------------------------------------------------------------------------

function table(run) {
  const lines = ['round | mode | conns | org | batches/s | positions/s | p50 ms | p99 ms | errors | crossings | pg ms/batch | load(1m) before', '--- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | ---'];
  for (const c of run.cells)
    for (const key of c.order) {
      const m = c[key];
      lines.push(`${c.round} | ${c.mode} | ${c.connections} | ${key} | ${m.batchesPerSecond} | ${m.positionsPerSecond} | ${m.p50} | ${m.p99} | ${m.errors} | ${m.crossings} | ${m.postgresMsPerBatch} | ${c.load1}`);
    }
  lines.push('', 'mode | conns | A batches/s (median of rounds) | B batches/s | cost ratio B/A (median of per-round ratios) | per-round ratios | A p50 / B p50 ms | crossings per B batch');
  lines.push('--- | --- | --- | --- | --- | --- | --- | ---');
  for (const s of run.summary) lines.push(`${s.mode} | ${s.connections} | ${s.A} | ${s.B} | ${s.costRatio} | ${s.ratios.join(', ')} | ${s.p50A} / ${s.p50B} | ${s.crossingsPerBatchB}`);
  return lines.join('\n');
}

const median = (values) => {
  const v = values.filter((x) => x !== null && Number.isFinite(x)).sort((a, b) => a - b);
  return v.length === 0 ? null : v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

async function main() {
  const started = Date.now();
  const run = { label, database, settings, cores: cpus().length, uptimeAtStart: uptime(), cells: [] };
  if (!flag('no-build')) {
    log('geofences: building (node scripts/build.mjs)');
    execFileSync(process.execPath, [join(root, 'scripts/build.mjs')], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const db = await connect();
  let child;
  try {
    const leftovers = await cleanup(db);
    if (leftovers.organizations > 0 || leftovers.accounts > 0) log(`geofences: removed an earlier run's leftovers ${JSON.stringify(leftovers)}`);
    await assertPortFree(PORT);
    await loadRepository();
    child = startService();
    process.once('exit', () => child.kill('SIGKILL'));
    await waitReady(PORT, child, 'the service').catch((error) => {
      throw new Error(`${error.message}\n${child.tail()}`);
    });
    const dayStart = Math.floor(Date.now() / 86_400_000) * 86_400_000;
    const tenants = await makeTenants(db, dayStart);
    run.geofences = await createGeofences(tenants.B);
    run.coverage = await coverage(db, tenants.B);
    await db.query('ANALYZE geofences');
    log(`geofences: ${JSON.stringify(run.geofences)}, ${JSON.stringify(run.coverage)}`);
    for (let round = 1; round <= settings.rounds; round++) {
      const load = uptime();
      log(`geofences: round ${round}: ${load}`);
      for (const mode of ['one', 'ops'])
        for (const connections of settings.connections) {
          const order = round % 2 === 1 ? ['A', 'B'] : ['B', 'A'];
          const cell = { round, mode, connections, order, uptime: load, load1: r2(loadavg()[0]) };
          for (const key of order) {
            await db.query('CHECKPOINT');
            cell[key] = await measure(db, child.pid, tenants[key], mode, connections);
            log(`  ${mode} c=${connections} ${key}: ${cell[key].batchesPerSecond} batches/s, ${cell[key].positionsPerSecond} positions/s, p50 ${cell[key].p50} p99 ${cell[key].p99} ms, errors ${cell[key].errors}, crossings ${cell[key].crossings}, pg ${cell[key].postgresMsPerBatch} ms/batch, others ${cell[key].cpu?.otherCores} cores`);
          }
          cell.costRatio = cell.B.batchesPerSecond > 0 ? r2(cell.A.batchesPerSecond / cell.B.batchesPerSecond) : null;
          run.cells.push(cell);
        }
    }
    run.summary = [];
    for (const mode of ['one', 'ops'])
      for (const connections of settings.connections) {
        const cells = run.cells.filter((c) => c.mode === mode && c.connections === connections);
        const bCells = cells.map((c) => c.B);
        run.summary.push({
          mode,
          connections,
          A: median(cells.map((c) => c.A.batchesPerSecond)),
          B: median(bCells.map((m) => m.batchesPerSecond)),
          positionsPerSecondA: median(cells.map((c) => c.A.positionsPerSecond)),
          positionsPerSecondB: median(bCells.map((m) => m.positionsPerSecond)),
          ratios: cells.map((c) => c.costRatio),
          costRatio: median(cells.map((c) => c.costRatio)),
          p50A: median(cells.map((c) => c.A.p50)),
          p50B: median(bCells.map((m) => m.p50)),
          p99A: median(cells.map((c) => c.A.p99)),
          p99B: median(bCells.map((m) => m.p99)),
          crossingsPerBatchB: r2(bCells.reduce((s, m) => s + m.crossings, 0) / bCells.reduce((s, m) => s + m.batchesPerSecond * settings.seconds, 0)),
          errors: cells.reduce((s, c) => s + c.A.errors + c.B.errors, 0),
        });
      }
    run.ok = run.summary.every((s) => s.costRatio !== null && s.costRatio <= 1.2 && s.errors === 0);
    run.crossingsRecorded = { A: await crossings(db, tenants.A), B: await crossings(db, tenants.B) };
    try {
      run.explain = [];
      for (const mode of ['one', 'ops']) run.explain.push(await explain(db, tenants.B, mode));
      run.explainWithout = [await explain(db, tenants.A, 'one'), await explain(db, tenants.A, 'ops')].map(({ text, nodes, ...rest }) => rest);
      run.pgStatStatements = await statStatements(db);
    } catch (error) {
      run.explainError = error.stack ?? String(error);
      log(`geofences: explain failed: ${run.explainError}`);
    }
    run.uptimeAtEnd = uptime();
  } finally {
    if (child) await stopServer(child);
    if (!flag('keep')) run.cleanup = await cleanup(db).catch((error) => ({ error: error.message }));
    await db.end();
  }
  run.minutes = r2((Date.now() - started) / 60_000);
  const out = join(root, 'bench/results/geofences.json');
  mkdirSync(dirname(out), { recursive: true });
  const previous = !flag('new-results') && existsSync(out) ? JSON.parse(readFileSync(out, 'utf8')) : { runs: [] };
  previous.runs = [...(previous.runs ?? []), run];
  writeFileSync(out, `${JSON.stringify(previous, null, 2)}\n`);
  console.log(table(run));
  for (const e of run.explain ?? []) console.log(`\nEXPLAIN ${e.mode}: ${e.executionMs} ms, crossing search ${e.crossingSearchMs} ms ${JSON.stringify(e.searchMs)} (events CTE ${e.eventsCteMs} ms), ${e.insides} points inside a geofence; CTEs ${JSON.stringify(e.ctes)}; triggers ${JSON.stringify(e.triggers)}; GiST: ${JSON.stringify(e.gistScans)}\n${e.text.join('\n')}`);
  for (const e of run.explainWithout ?? []) console.log(`EXPLAIN without geofences ${e.mode}: ${e.executionMs} ms, crossing search ${e.crossingSearchMs} ms (events CTE ${e.eventsCteMs} ms); CTEs ${JSON.stringify(e.ctes)}; triggers ${JSON.stringify(e.triggers)}`);
  console.log(`\npg_stat_statements: ${JSON.stringify(run.pgStatStatements).slice(0, 400)}`);
  console.log(`load at start: ${run.uptimeAtStart}\nload at end: ${run.uptimeAtEnd}\ncleanup: ${JSON.stringify(run.cleanup)}\nwritten: bench/results/geofences.json (run "${label}", ${run.minutes} min)`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main().catch((error) => {
  log(`geofences failed: ${error.stack ?? error}`);
  process.exit(1);
});
