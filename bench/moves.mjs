// `node bench/moves.mjs [--connections 1,8,32,64] [--seconds 10] [--warmup 2] [--twins 40] [--step 0.001]
//   [--url postgresql://…/twin_bench_full] [--fold-service [--port 3950]] [--label name]`
// Moves of located twins straight to PostgreSQL, no service code: what the database does per move with
// the triggers of twins (the cluster grid of twin_tile_cells among them). For each number of connections,
// each connection moves its own twins (the first located twins by id, so mostly public places: one
// organization scope, the grid's shared rows) by a small random step, one autocommitted
// `UPDATE twins SET location = …, modified = now() WHERE id = $1` after the other, for a fixed time after a
// warm-up. Prints moves/s, p50/p99 latency, errors, how much of the connections' active time went to
// waiting for another transaction's row (pg_stat_activity sampled every 50 ms; every wait event is in the
// JSON), and the unfolded shard rows left (migration TileGridShards).
// `--fold-service` starts the built service (dist/, `npm run build`) on the database meanwhile, so the
// grid is folded as in production. The twins go back to their places at the end, and the grid's zoom 0
// is checked against the twins (exact counts). Writes bench/results/moves-<label>.json.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { flag, option } from './lib/args.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const base = process.env.PGURL_BASE ?? 'postgresql://postgres@127.0.0.1:5432';
const url = option('url', `${base}/twin_bench_full`);
const levels = option('connections', '1,8,32,64').split(',').map(Number);
const seconds = Number(option('seconds', 10));
const warmup = Number(option('warmup', 2));
const perConnection = Number(option('twins', 40));
const step = Number(option('step', 0.001));
const label = option('label', 'latest');
const log = (message) => process.stderr.write(`${message}\n`);
const APPLICATION = 'bench-moves';

/** Deterministic walks: the same twins (the first by id) take the same steps run after run. */
function random(seed) {
  let state = seed >>> 0;
  return () => ((state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32);
}

const quantile = (sorted, q) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]);
const round1 = (v) => Math.round(v * 10) / 10;

async function client() {
  const c = new pg.Client({ connectionString: url, application_name: APPLICATION });
  await c.connect();
  return c;
}

const MOVE = { name: 'bench-move', text: `UPDATE twins SET location = ST_SetSRID(ST_MakePoint($2, $3), 4326), modified = now() WHERE id = $1` };

/** One connection's loop: its own twins in turn, each a step further, until `until` (hrtime ns). */
async function mover(db, twins, next, until, latencies, errors) {
  let i = 0;
  while (process.hrtime.bigint() < until) {
    const twin = twins[i++ % twins.length];
    twin.lon = Math.max(-179.9, Math.min(179.9, twin.lon + (next() - 0.5) * 2 * step));
    twin.lat = Math.max(-80, Math.min(80, twin.lat + (next() - 0.5) * 2 * step));
    const started = process.hrtime.bigint();
    try {
      await db.query({ ...MOVE, values: [twin.id, twin.lon, twin.lat] });
      latencies?.push(Number(process.hrtime.bigint() - started) / 1e6);
    } catch (error) {
      errors[error.code ?? error.message] = (errors[error.code ?? error.message] ?? 0) + 1;
    }
  }
}

/** Samples the movers' wait events every 50 ms while `until` lasts: the share of their time spent waiting, by event. */
async function sampleWaits(db, until) {
  const waits = {};
  let samples = 0;
  while (process.hrtime.bigint() < until) {
    const { rows } = await db.query(
      `SELECT coalesce(wait_event_type || ':' || wait_event, 'running') AS event, count(*)::int AS n
         FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' GROUP BY 1`,
      [APPLICATION],
    );
    samples++;
    for (const { event, n } of rows) waits[event] = (waits[event] ?? 0) + n;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { waits, samples };
}

async function startFoldService() {
  const port = Number(option('port', 3950));
  const child = spawn(process.execPath, [join(root, 'dist/src/main.js')], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'production', DATABASE_URL: url, PORT: String(port), METRICS_PORT: '0', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
    if (await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false)) return child;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill('SIGTERM');
  throw new Error('the service did not answer /health within 60 s');
}

async function main() {
  const admin = await client();
  const sharded = (await admin.query(`SELECT 1 FROM information_schema.columns WHERE table_name = 'twin_tile_cells' AND column_name = 'shard'`)).rowCount > 0;
  const unfolded = async () => (sharded ? (await admin.query(`SELECT count(*)::int AS n FROM twin_tile_cells WHERE shard <> 0`)).rows[0].n : 0);
  const most = Math.max(...levels);
  const { rows: picked } = await admin.query(
    `SELECT id, ST_X(location) AS lon, ST_Y(location) AS lat FROM twins
      WHERE location IS NOT NULL AND abs(ST_Y(location)) < 80 ORDER BY id LIMIT $1`,
    [most * perConnection],
  );
  if (picked.length < most * perConnection) throw new Error(`only ${picked.length} located twins, ${most * perConnection} needed`);
  const originals = picked.map((t) => ({ ...t }));
  log(`moves: ${url.replace(/\/\/[^@]*@/, '//…@')}, grid ${sharded ? 'sharded (TileGridShards)' : 'one row per cell'}, ${picked.length} twins, ${seconds} s per level after ${warmup} s warm-up, step ±${step}°; machine ${cpus().length} × ${cpus()[0]?.model}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);

  const service = flag('fold-service') ? await startFoldService() : undefined;
  const connections = [];
  const results = [];
  try {
    for (let i = 0; i < most; i++) connections.push(await client());
    for (const n of levels) {
      const groups = Array.from({ length: n }, (_, c) => picked.slice(c * perConnection, (c + 1) * perConnection));
      const streams = groups.map((_, c) => random(1000 + c));
      const errors = {};
      const warmEnd = process.hrtime.bigint() + BigInt(Math.round(warmup * 1e9));
      await Promise.all(groups.map((twins, c) => mover(connections[c], twins, streams[c], warmEnd, undefined, errors)));
      const latencies = [];
      const started = process.hrtime.bigint();
      const until = started + BigInt(Math.round(seconds * 1e9));
      const [sampled] = await Promise.all([sampleWaits(admin, until), ...groups.map((twins, c) => mover(connections[c], twins, streams[c], until, latencies, errors))]);
      const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
      latencies.sort((a, b) => a - b);
      const busy = Object.values(sampled.waits).reduce((s, v) => s + v, 0);
      // Waits for another transaction's row (a grid cell another move, or the fold, holds); growing the table is apart.
      const rowLockWaits = ['Lock:transactionid', 'Lock:tuple'].reduce((s, event) => s + (sampled.waits[event] ?? 0), 0);
      const row = {
        connections: n,
        moves: latencies.length,
        perSecond: Math.round(latencies.length / elapsed),
        p50: round1(quantile(latencies, 0.5)),
        p99: round1(quantile(latencies, 0.99)),
        max: round1(latencies.at(-1) ?? NaN),
        errors,
        rowLockWaitShare: busy === 0 ? 0 : Math.round((rowLockWaits / busy) * 100) / 100,
        waits: sampled.waits,
        unfoldedAfter: await unfolded(),
      };
      results.push(row);
      log(`moves: c=${n}: ${row.perSecond}/s, p50 ${row.p50} ms, p99 ${row.p99} ms, row-lock waits ${Math.round(row.rowLockWaitShare * 100)} % of active time, unfolded rows ${row.unfoldedAfter}${Object.keys(errors).length ? `, errors ${JSON.stringify(errors)}` : ''}`);
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  } finally {
    for (const c of connections) await c.end().catch(() => undefined);
    // The twins back where they were: the bench data stays as loaded.
    await admin.query(
      `UPDATE twins t SET location = ST_SetSRID(ST_MakePoint(o.lon, o.lat), 4326) FROM unnest($1::uuid[], $2::float8[], $3::float8[]) AS o(id, lon, lat) WHERE t.id = o.id`,
      [originals.map((t) => t.id), originals.map((t) => t.lon), originals.map((t) => t.lat)],
    );
    if (service) {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const exited = new Promise((resolve) => service.once('exit', resolve));
      service.kill('SIGTERM');
      await exited;
    }
  }

  // Zoom 0 of the grid, summed over shards, against the twins: the counts stay exact under the load.
  const { rows: check } = await admin.query(`
    WITH grid AS (SELECT organization_id, sum(count)::bigint AS n FROM twin_tile_cells WHERE zoom = 0 GROUP BY 1),
         live AS (SELECT CASE WHEN public OR cardinality(services) > 0 THEN '00000000-0000-0000-0000-000000000000'::uuid ELSE organization_id END AS organization_id, count(*)::bigint AS n
                    FROM twins WHERE location IS NOT NULL AND tile_fraction_y(ST_Y(location)) >= 0 AND tile_fraction_y(ST_Y(location)) < 1 GROUP BY 1)
    SELECT count(*)::int AS differing FROM grid g FULL JOIN live l USING (organization_id) WHERE g.n IS DISTINCT FROM l.n AND coalesce(g.n, 0) + coalesce(l.n, 0) > 0`);
  const remaining = await unfolded();
  await admin.end();

  const lines = ['| connections | moves/s | p50 ms | p99 ms | max ms | row-lock waits | unfolded rows after | errors |', '|---:|---:|---:|---:|---:|---:|---:|---|'];
  for (const r of results) lines.push(`| ${r.connections} | ${r.perSecond} | ${r.p50} | ${r.p99} | ${r.max} | ${Math.round(r.rowLockWaitShare * 100)} % | ${r.unfoldedAfter} | ${Object.keys(r.errors).length ? JSON.stringify(r.errors) : ''} |`);
  lines.push('', `grid zoom 0 against the twins: ${check[0].differing === 0 ? 'exact' : `${check[0].differing} scopes differ`}; unfolded shard rows at the end: ${remaining}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(lines.join('\n'));
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, `bench/results/moves-${label}.json`), `${JSON.stringify({ label, sharded, foldService: Boolean(service), seconds, warmup, perConnection, step, results, exact: check[0].differing === 0, unfoldedAtEnd: remaining }, null, 2)}\n`);
  if (check[0].differing !== 0) process.exitCode = 1;
}

await main();
