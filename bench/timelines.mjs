// Timelines at scale: the same timeline scenarios on a database of N events over 10,000 twins, so the
// figures at 1,000,000 and at 20,000,000 events can be compared (docs/SCALING.md).
//
//   node bench/timelines.mjs --events 1000000            # load twin_bench_timelines_1m (or reuse it), then measure
//   node bench/timelines.mjs --events 20000000 --no-load # measure the kept 20M database again
//   node bench/timelines.mjs --compare 1m,20m            # the ratio table of two saved results
//
// Options: --events N, --no-load (fail rather than load), --reload (drop and load again), --duration /
// --warmup (seconds, default 5 / 2), --connections (default 8), --rounds (each scenario measured this
// many times, default 2: the machine is shared), --replays (stream replays timed per round, default 20).
// Environment: PGURL_BASE (postgresql://postgres@127.0.0.1:5432), BENCH_SERVICE_PORT (default 3410).
//
// The data: 100 organizations of 100 twins; every twin but two has (N - LONG) / 9,999 events spread
// over the last 360 days (rows written in time order, as they arrive in production), one twin has LONG
// (20,000) events in both sizes, so its deep keyset page and its stream replay are read at the same
// depth in both; one twin (the POST target) starts empty. Every event has its `changes` row (the
// change log as a never-pruned worst case: the service runs with STREAM_RETENTION_HOURS at its maximum).
// Ids are UUIDv7 of the event's timestamp. Foreign keys, triggers and indexes are off during the bulk
// insert (session_replication_role = replica; the rows are consistent by construction) and the indexes
// are built afterwards: a fresh, packed B-tree, slightly kinder than one grown by inserts.
import http from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { connect, run } from './lib/load.mjs';
import { flag, option } from './lib/args.mjs';

process.env.BENCH_SERVICE_PORT ??= '3410';
const { assertPortFree, benchCursor, SERVICE_PORT, startService, stopServer, waitReady } = await import('./lib/servers.mjs');

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const autocannon = require('autocannon');

const base = (process.env.PGURL_BASE ?? 'postgresql://postgres@127.0.0.1:5432').replace(/\/$/, '');
const log = (line) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const TWINS = 10_000;
const ORGANIZATIONS = 100;
const LONG = 20_000;
const SPAN_DAYS = 360;
const PAGE = 50;
/** The deep keyset page starts after this many events of the long timeline (page 201 of 50). */
const DEEP = 10_000;
const REPLAY = 1_000;
/** Rows per INSERT statement (one transaction each): a failed load loses one chunk of work, not all. */
const CHUNK_ROWS = 1_000_000;
const LOADER_VERSION = 1;

const label = (n) => (n >= 1e6 ? `${n / 1e6}m` : `${n / 1e3}k`);
const outDir = join(root, 'bench/results');

async function load(url, events, db) {
  const started = Date.now();
  const env = { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'error', NODE_ENV: 'production' };
  // The CLI migrates the new database, as an operator's first command would.
  const org = JSON.parse(await run(process.execPath, [join(root, 'dist/src/cli/main.js'), 'create-organization', '--name', 'Timelines 1'], { env, cwd: root })).id;
  await db.query(`SET synchronous_commit = off`);
  await db.query(`SET maintenance_work_mem = '1GB'`);
  await db.query(`INSERT INTO organizations (name) SELECT 'Timelines ' || i FROM generate_series(2, $1) i`, [ORGANIZATIONS]);
  const account = (await db.query(`INSERT INTO accounts (name) VALUES ('Timelines bench') RETURNING id`)).rows[0].id;
  await db.query(`INSERT INTO memberships (account_id, organization_id) VALUES ($1, $2)`, [account, org]);
  const token = `tw_bench${randomBytes(24).toString('base64url')}`;
  await db.query(`INSERT INTO access_tokens (account_id, token_hash) VALUES ($1, $2)`, [account, createHash('sha256').update(token).digest()]);
  // Twin n (1…10,000) belongs to organization n % 100; n = 100 is the long timeline, 200 the POST target (both of the bench organization).
  await db.query(
    `INSERT INTO twins (organization_id, name, description, characteristics, created, modified)
     SELECT o.id, 'Twin ' || i, 'A timeline bench twin', ARRAY['outdoors'], now() - interval '400 days', now() - interval '400 days'
       FROM generate_series(1, $1) i
       JOIN (SELECT id, CASE WHEN id = $3 THEN 0 ELSE row_number() OVER (ORDER BY id) END AS n FROM organizations) o ON o.n = i % $2`,
    [TWINS, ORGANIZATIONS, org],
  );
  await db.query(`UPDATE twins SET name = 'Long timeline' WHERE name = 'Twin 100'`);
  await db.query(`UPDATE twins SET name = 'POST target' WHERE name = 'Twin 200'`);
  const twin = async (name) => (await db.query(`SELECT id FROM twins WHERE name = $1`, [name])).rows[0].id;
  const longTwin = await twin('Long timeline');
  const postTwin = await twin('POST target');
  const typicalTwin = await twin('Twin 300');
  await db.query(`
    CREATE OR REPLACE FUNCTION bench_uuidv7(ts timestamptz) RETURNS uuid LANGUAGE sql VOLATILE AS $$
      SELECT encode(set_bit(set_bit(set_bit(set_bit(
               overlay(uuid_send(gen_random_uuid()) PLACING substring(int8send(floor(extract(epoch FROM ts) * 1000)::bigint) FROM 3) FROM 1 FOR 6),
               52, 1), 53, 1), 54, 1), 55, 0), 'hex')::uuid
    $$`);

  // The twins with ordinary timelines, numbered 1…m for the generator.
  await db.query(`CREATE TABLE bench_twins AS SELECT id, organization_id, row_number() OVER (ORDER BY id)::int AS n FROM twins WHERE id NOT IN ($1, $2)`, [longTwin, postTwin]);
  await db.query(`CREATE INDEX ON bench_twins (n)`);
  const m = TWINS - 2;
  const per = Math.floor((events - LONG) / m);
  const longOrg = org;

  // Indexes and constraints are built after the rows; FKs and triggers (change positions, webhooks outbox) are skipped.
  await db.query(`ALTER TABLE events DROP CONSTRAINT events_pkey`);
  await db.query(`ALTER TABLE events DROP CONSTRAINT events_organization_id_id_key`);
  await db.query(`DROP INDEX events_timeline_idx`);
  await db.query(`ALTER TABLE changes DROP CONSTRAINT changes_pkey`);
  await db.query(`DROP INDEX changes_twin_idx, changes_changed_idx`);
  await db.query(`SET session_replication_role = replica`);

  // Time steps k = 1…per, oldest first; a chunk is a run of steps over every twin, so the heap is in time order.
  const stepsPerChunk = Math.max(1, Math.floor(CHUNK_ROWS / m));
  const chunks = Math.ceil(per / stepsPerChunk);
  const spanMs = SPAN_DAYS * 86_400_000;
  const insertSql = (rowsSql) => `
    WITH e AS (
      INSERT INTO events (id, organization_id, twin_id, name, category, data, "timestamp", modified)
      SELECT bench_uuidv7(ts), org, tw, (ARRAY['walk', 'run', 'meal', 'sleep', 'visit'])[1 + k % 5], (ARRAY['activity', 'health', 'place'])[1 + k % 3],
             jsonb_build_object('steps', k * 37 % 9000, 'device', 'watch', 'route', jsonb_build_object('km', (k % 70) / 10.0)), ts, ts
        FROM (${rowsSql}) r
       ORDER BY ts
      RETURNING *
    )
    INSERT INTO changes (position, organization_id, twin_id, kind, subject_id, name, category, resource, changed)
    SELECT nextval('changes_position_seq'), e.organization_id, e.twin_id, 'event.created', e.id, e.name, e.category,
           json_build_object('type', 'events', 'id', e.id,
             'attributes', json_build_object('name', e.name, 'category', e.category, 'data', e.data, 'timestamp', e."timestamp", 'modified', e.modified, 'occurred', e.occurred),
             'relationships', json_build_object('twin', json_build_object('data', json_build_object('type', 'twins', 'id', e.twin_id))))::text,
           now()
      FROM (SELECT * FROM e ORDER BY "timestamp") e`;
  for (let c = 0; c < chunks; c++) {
    const from = c * stepsPerChunk + 1;
    const to = Math.min(per, (c + 1) * stepsPerChunk);
    const longFrom = Math.floor((c * LONG) / chunks) + 1;
    const longTo = Math.floor(((c + 1) * LONG) / chunks);
    const t = Date.now();
    await db.query(
      insertSql(`
        SELECT t.organization_id AS org, t.id AS tw, k, now() - interval '1 hour' - ($3::bigint - k) * ($4::bigint / $3::bigint) * interval '1 millisecond' - t.n * interval '1 millisecond' AS ts
          FROM generate_series($1::int, $2::int) k, bench_twins t
        UNION ALL
        SELECT $5::uuid, $6::uuid, k, now() - interval '1 hour' - ($9::bigint - k) * ($4::bigint / $9::bigint) * interval '1 millisecond' FROM generate_series($7::int, $8::int) k`),
      [from, to, per, spanMs, longOrg, longTwin, longFrom, longTo, LONG],
    );
    log(`load: chunk ${c + 1}/${chunks} (${((to - from + 1) * m + longTo - longFrom + 1).toLocaleString('en')} events + changes) in ${((Date.now() - t) / 1000).toFixed(1)} s; ${((Date.now() - started) / 1000).toFixed(0)} s so far`);
  }
  await db.query(`SET session_replication_role = DEFAULT`);
  // The timelines' counts (migration TwinEventCounts), which its triggers keep, were off with them.
  await db.query(`INSERT INTO twin_event_counts (organization_id, twin_id, total) SELECT organization_id, twin_id, count(*) FROM events GROUP BY organization_id, twin_id`);
  const tIndex = Date.now();
  // The same names and definitions as the migrations (migration:check compares them).
  for (const statement of [
    `ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (id)`,
    `CREATE INDEX events_timeline_idx ON events (twin_id, "timestamp" DESC, id DESC)`,
    `ALTER TABLE events ADD CONSTRAINT events_organization_id_id_key UNIQUE (organization_id, id)`,
    `ALTER TABLE changes ADD CONSTRAINT changes_pkey PRIMARY KEY (position)`,
    `CREATE INDEX changes_twin_idx ON changes (twin_id, position)`,
    `CREATE INDEX changes_changed_idx ON changes USING brin (changed)`,
  ]) {
    const t = Date.now();
    await db.query(statement);
    log(`load: ${statement.slice(0, 60)}… ${((Date.now() - t) / 1000).toFixed(1)} s`);
  }
  const indexSeconds = (Date.now() - tIndex) / 1000;
  await db.query(`DROP TABLE bench_twins`);
  log('load: VACUUM ANALYZE');
  await db.query(`VACUUM ANALYZE events, changes, twins, organizations`);
  const info = { token, organizationId: org, longTwin, postTwin, typicalTwin };
  const loadSeconds = Math.round((Date.now() - started) / 100) / 10;
  await db.query(`CREATE TABLE bench_meta (key text PRIMARY KEY, value jsonb NOT NULL)`);
  await db.query(`INSERT INTO bench_meta VALUES ('timelines', $1)`, [JSON.stringify({ version: LOADER_VERSION, events, info, loadSeconds, indexSeconds, loadedAt: new Date().toISOString() })]);
  log(`load: ${events.toLocaleString('en')} events in ${loadSeconds} s (indexes ${indexSeconds.toFixed(0)} s)`);
}

/** The database of `events` events: loaded when missing (or with --reload), else reused. */
async function ensure(events) {
  const name = `twin_bench_timelines_${label(events)}`;
  const url = `${base}/${name}`;
  const admin = await connect(`${base}/postgres`);
  try {
    const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount > 0;
    let meta;
    if (exists && !flag('reload')) {
      const db = await connect(url);
      meta = (await db.query(`SELECT value FROM bench_meta WHERE key = 'timelines'`).catch(() => ({ rows: [] }))).rows[0]?.value;
      await db.end();
      if (meta?.version === LOADER_VERSION && meta.events === events) {
        log(`data: ${name} reused (${events.toLocaleString('en')} events, loaded in ${meta.loadSeconds} s on ${meta.loadedAt})`);
        return { url, name, ...meta.info, loadSeconds: meta.loadSeconds };
      }
    }
    if (flag('no-load')) throw new Error(`${name} is missing or stale and --no-load was given`);
    if (exists) {
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [name]);
      await admin.query(`DROP DATABASE ${name}`);
    }
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const db = await connect(url);
  try {
    await load(url, events, db);
  } finally {
    await db.end();
  }
  return ensure(events);
}

function cannon(scenario, connections, duration) {
  return new Promise((resolve, reject) => {
    autocannon(
      { url: `http://127.0.0.1:${SERVICE_PORT}${scenario.path}`, method: scenario.method ?? 'GET', headers: scenario.headers, body: scenario.body, connections, duration, timeout: 30 },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

/**
 * Opens the stream after `position` with a plain HTTP client and reads server-sent events until
 * `count` `created` messages arrived: the milliseconds from the request to the last of them.
 */
function replay(headers, position, count) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    let seen = 0;
    let buffer = '';
    const request = http.get(
      { host: '127.0.0.1', port: SERVICE_PORT, path: '/events/stream', headers: { ...headers, accept: 'text/event-stream', 'last-event-id': position } },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          reject(new Error(`stream answered ${response.statusCode}`));
          return;
        }
        response.setEncoding('utf8');
        response.on('data', (chunk) => {
          buffer += chunk;
          const messages = buffer.split('\n\n');
          buffer = messages.pop();
          for (const message of messages) {
            if (/^event: reset$/m.test(message)) {
              request.destroy();
              reject(new Error('the stream answered reset: the change log does not reach back to the position'));
              return;
            }
            if (/^event: created$/m.test(message)) seen++;
          }
          if (seen >= count) {
            const ms = Number(process.hrtime.bigint() - started) / 1e6;
            request.destroy();
            resolve(ms);
          }
        });
        response.on('end', () => seen < count && reject(new Error(`the stream ended after ${seen} messages`)));
      },
    );
    request.on('error', (error) => seen < count && reject(error));
    // A replay that stalls is a failure to report, not a run that never ends.
    const timer = setTimeout(() => {
      request.destroy();
      reject(new Error(`the stream replay stalled after ${seen} of ${count} messages (last bytes: ${JSON.stringify(buffer.slice(-300))})`));
    }, 30_000);
    timer.unref();
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function measure(data, events) {
  const db = await connect(data.url);
  // POST /events/ writes to its own twin: every run starts from the same empty timeline there.
  await db.query('DELETE FROM events WHERE twin_id = $1', [data.postTwin]);
  await db.query('VACUUM ANALYZE events');
  const deep = (await db.query(
    `SELECT json_build_array("timestamp"::text, id::text) AS position FROM events WHERE twin_id = $1 ORDER BY "timestamp" DESC, id DESC OFFSET $2 LIMIT 1`,
    [data.longTwin, DEEP - 1],
  )).rows[0].position;
  const detail = (await db.query(`SELECT id FROM events WHERE twin_id = $1 ORDER BY "timestamp" DESC, id DESC OFFSET $2 LIMIT 1`, [data.longTwin, LONG / 2])).rows[0].id;
  // The position before the long twin's last REPLAY changes: a resume replays exactly REPLAY of them.
  const from = (await db.query(
    `SELECT c.position::text AS after FROM changes c WHERE c.twin_id = $1 AND c.kind LIKE 'event.%' ORDER BY c.position DESC OFFSET $2 LIMIT 1`,
    [data.longTwin, REPLAY],
  )).rows[0].after;
  const typicalCount = (await db.query(`SELECT count(*)::int AS n FROM events WHERE twin_id = $1`, [data.typicalTwin])).rows[0].n;
  await db.end();

  const tenant = { authorization: `Token ${data.token}`, 'x-organization': data.organizationId };
  const asTwin = (twin) => ({ ...tenant, 'x-twin': twin });
  const scenarios = [
    { name: `GET /events/ page 1 (typical twin, ${typicalCount} events)`, key: 'page1-typical', path: '/events/', headers: asTwin(data.typicalTwin) },
    { name: `GET /events/ page 1 (long twin, ${LONG} events)`, key: 'page1-long', path: '/events/', headers: asTwin(data.longTwin) },
    { name: `GET /events/ keyset page ${DEEP / PAGE + 1} (long twin)`, key: 'keyset-deep', path: `/events/?page_after=${benchCursor('events:-timestamp', deep)}`, headers: asTwin(data.longTwin) },
    { name: 'GET /events/<id>', key: 'detail', path: `/events/${detail}/`, headers: asTwin(data.longTwin) },
    {
      name: 'POST /events/',
      key: 'post',
      path: '/events/',
      method: 'POST',
      headers: { ...asTwin(data.postTwin), 'content-type': 'application/vnd.api+json' },
      body: JSON.stringify({ data: { type: 'events', attributes: { name: 'walk', category: 'activity', data: { steps: 4200, device: 'watch', route: { km: 3.2 } } } } }),
    },
  ];
  const seconds = Number(option('duration', 5));
  const warmup = Number(option('warmup', 2));
  const connections = Number(option('connections', 8));
  const rounds = Number(option('rounds', 2));
  const replays = Number(option('replays', 20));

  await assertPortFree(SERVICE_PORT);
  // Changes are loaded with `changed` = load time: the longest retention keeps them for a year of re-runs.
  process.env.STREAM_RETENTION_HOURS = String(24 * 365);
  // Other services on this machine may hold the default metrics port.
  process.env.METRICS_PORT = '0';
  const service = startService(data.url);
  const stop = () => service.kill('SIGKILL');
  process.once('exit', stop);
  const rows = scenarios.map((s) => ({ name: s.name, key: s.key, runs: [] }));
  const replayRow = { name: `stream replay of ${REPLAY} changes (ms, median of ${replays})`, key: 'replay', runs: [] };
  try {
    await waitReady(SERVICE_PORT, service, 'the service');
    for (const scenario of scenarios) {
      const response = await fetch(`http://127.0.0.1:${SERVICE_PORT}${scenario.path}`, { method: scenario.method ?? 'GET', headers: scenario.headers, body: scenario.body });
      if (!response.ok) throw new Error(`${scenario.name} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
      await response.arrayBuffer();
    }
    for (let round = 1; round <= rounds; round++) {
      await replay(asTwin(data.longTwin), from, REPLAY); // warm-up
      const times = [];
      for (let i = 0; i < replays; i++) times.push(await replay(asTwin(data.longTwin), from, REPLAY));
      const run = { ms: Math.round(median(times) * 10) / 10, p90: Math.round([...times].sort((a, b) => a - b)[Math.floor(times.length * 0.9)] * 10) / 10 };
      replayRow.runs.push(run);
      log(`round ${round} ${replayRow.name.padEnd(52)} median ${run.ms} ms  p90 ${run.p90} ms`);
      for (const [i, scenario] of scenarios.entries()) {
        await cannon(scenario, connections, warmup);
        const r = await cannon(scenario, connections, seconds);
        const run = { rps: Math.round(r.requests.average * 10) / 10, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx };
        rows[i].runs.push(run);
        log(`round ${round} ${scenario.name.padEnd(52)} ${String(run.rps).padStart(8)} rps  p50 ${run.p50} ms  p99 ${run.p99} ms  errors ${run.errors}`);
      }
    }
  } finally {
    await stopServer(service);
    process.removeListener('exit', stop);
  }
  const result = {
    events,
    label: label(events),
    scenarios: [...rows, replayRow],
    settings: { seconds, warmup, connections, rounds, replays },
    machine: { cpus: cpus().length, model: cpus()[0]?.model, loadAfter: loadavg().map((l) => Math.round(l * 100) / 100) },
    date: new Date().toISOString(),
  };
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, `timelines-${label(events)}.json`), `${JSON.stringify(result, null, 2)}\n`);
  console.log(`| scenario (${events.toLocaleString('en')} events, c=${connections}) | ${Array.from({ length: rounds }, (_, i) => `run ${i + 1}`).join(' | ')} | p50/p99 ms (last run) |`);
  console.log(`|---|${'---:|'.repeat(rounds)}---:|`);
  for (const row of result.scenarios) {
    const cells = row.runs.map((r) => (row.key === 'replay' ? `${r.ms} ms` : `${r.rps} rps`));
    const last = row.runs.at(-1);
    console.log(`| ${row.name} | ${cells.join(' | ')} | ${row.key === 'replay' ? `p90 ${last.p90}` : `${last.p50}/${last.p99}`} |`);
  }
  console.log(`\nwritten: bench/results/timelines-${label(events)}.json`);
}

/** The ratio table of two saved results (`--compare 1m,20m`): mean of the runs of each, big / small. */
function compare([small, big]) {
  const read = (name) => JSON.parse(readFileSync(join(outDir, `timelines-${name}.json`), 'utf8'));
  const a = read(small);
  const b = read(big);
  const mean = (row) => row.runs.reduce((sum, r) => sum + (row.key === 'replay' ? r.ms : r.rps), 0) / row.runs.length;
  console.log(`| scenario | ${small} (runs) | ${big} (runs) | ${big} / ${small} | within 10 % |`);
  console.log('|---|---:|---:|---:|:-:|');
  for (const rowB of b.scenarios) {
    const rowA = a.scenarios.find((r) => r.key === rowB.key);
    if (!rowA) continue;
    const unit = rowB.key === 'replay' ? 'ms' : 'rps';
    const fmt = (row) => row.runs.map((r) => (unit === 'ms' ? r.ms : r.rps)).join(' / ');
    const ratio = mean(rowB) / mean(rowA);
    // Throughput should not drop, replay time should not grow, by more than 10 %.
    const ok = unit === 'ms' ? ratio <= 1.1 : ratio >= 0.9;
    console.log(`| ${rowB.name.replace(/\(typical twin, \d+ events\)/, '(typical twin)')} | ${fmt(rowA)} ${unit} | ${fmt(rowB)} ${unit} | ${ratio.toFixed(2)} | ${ok ? 'yes' : 'NO'} |`);
  }
}

const comparing = option('compare', undefined);
if (comparing) {
  compare(comparing.split(','));
} else {
  const events = Number(option('events', 1_000_000));
  const data = await ensure(events);
  if (!flag('load-only')) await measure(data, events);
}
