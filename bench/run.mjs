// `npm run bench [-- --quick]`: the service (production build) against the raw baseline
// (bench/raw-server.mjs: hand-written Fastify + pg, no service code, its own one-round-trip SQL),
// alternating scenario by scenario, at 8 and 50 connections, after a warm-up. Every run first checks
// that both answer the same documents (bench/lib/verify.mjs) and aborts when they do not. Writes
// bench/results/latest.json (and <mode>.json) and prints a table. Figures that matter are ratios
// measured in the same run.
//
// Options: --quick (100,000 twins, 3 s per scenario), --verify (only the document check; exit 1 on a
// difference), --only <substring>[,<substring>…] (scenarios whose name contains one of them), --connections 8,50,
// --duration / --warmup / --prewarm (seconds; --prewarm 0 for none), --scaling (with --only: the 100,000-twin comparison of those scenarios too;
// a full run without --only always has it), --no-build. Environment: PGURL_BASE (postgresql://postgres@127.0.0.1:5432).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { connect, DatabaseUnreachable, ensureData, prepare, resetEmbarks, run, settle, waitQuiet } from './lib/load.mjs';
import { verify } from './lib/verify.mjs';
import { assertPortFree, RAW_PORT, scenarios, SERVICE_NODE_OPTIONS, SERVICE_PORT, startRaw, startService, stopServer, waitReady } from './lib/servers.mjs';
import { flag, option } from './lib/args.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const autocannon = require('autocannon');

const mode = flag('quick') ? 'quick' : 'full';
const seconds = Number(option('duration', mode === 'quick' ? 3 : 10));
const warmupSeconds = Number(option('warmup', mode === 'quick' ? 1 : 3));
const connectionsList = option('connections', '8,50').split(',').map(Number);
// Before the first row, every server runs every scenario this long: without it the run's first row measured
// a service that had just started (docs/PERFORMANCE.md, "What is measured").
const prewarmSeconds = Number(option('prewarm', mode === 'quick' ? 1 : 2));
const only = option('only', undefined);
const base = (process.env.PGURL_BASE ?? 'postgresql://postgres@127.0.0.1:5432').replace(/\/$/, '');
const log = (line) => process.stderr.write(`${line}\n`);
/** BENCH_DB_SUFFIX names a separate copy of the datasets (twin_bench_quick<suffix>), for a second checkout whose migrations differ. */
const dataset = (name) => `twin_bench_${name}${process.env.BENCH_DB_SUFFIX ?? ''}`;

/** Least service/raw throughput ratio per scenario kind. */
const TARGETS = {
  detail: 0.8, list: 0.8, my: 0.8, timeline: 0.8, post: 0.8, patch: 0.8, embark: 0.8, geo: 0.9, distance: 0.9, feed: 0.9,
};
/**
 * p99 at 50 connections at most this many times raw's; the service's peak RSS over the run at most this
 * many times the hand-written server's peak over the same rows (a ratio, as for throughput: an absolute
 * figure moves with the machine, the Node version and the rows run before); scaling 100k → 1M.
 */
const P99_FACTOR = 2;
const P99_AT = 50;
const MAX_PEAK_RSS_RATIO = 1.2;
const MAX_SCALING_DROP = 0.1;

function cannon(port, scenario, connections, duration) {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${port}${scenario.path}`,
        method: scenario.method ?? 'GET',
        headers: scenario.headers,
        body: scenario.body,
        // A scenario with a pool (embark) takes a fresh path and headers for every request.
        requests: scenario.pairs ? [{ method: scenario.method, setupRequest: (request) => ({ ...request, ...scenario.pairs.next() }) }] : undefined,
        connections,
        duration,
        timeout: 30,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

/** A scenario's answers that are not what it expects (2xx, or its `expectStatus`, such as a 304) count as errors. */
const summary = (r, scenario = {}) => ({
  rps: Math.round(r.requests.average * 10) / 10,
  p50: r.latency.p50,
  p99: r.latency.p99,
  errors: r.errors + r.timeouts + r.non2xx - (scenario.expectStatus === 304 ? r['3xx'] : 0),
});

/**
 * The machine's CPU time counters (/proc/stat, all CPUs): `steal` is time the hypervisor gave this
 * virtual machine's CPUs to others. Undefined where /proc/stat cannot be read.
 */
function cpuTimes() {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
    return { total: fields.reduce((a, b) => a + b, 0), steal: fields[7] ?? 0 };
  } catch {
    return undefined;
  }
}

/**
 * The share of the machine's CPU time stolen between two readings, in percent. On a shared virtual
 * machine that share changes under a run (10 % on average since boot on one session's machine, with
 * rows of one build moving by ±0.3 in ratio): a row measured while much was stolen says so.
 */
const stealPercent = (before, after) =>
  before && after && after.total > before.total ? Math.round(((after.steal - before.steal) / (after.total - before.total)) * 1000) / 10 : undefined;

/**
 * Starts a process's peak RSS (VmHWM) over from its current RSS (Linux: `5` written to clear_refs), so
 * the peak of one server's share of one row can be read after it. False where that cannot be done.
 */
function resetPeak(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** VmHWM / VmRSS of a process, in MB. */
function memory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    return { hwm: kb('VmHWM') / 1024, rss: kb('VmRSS') / 1024 };
  } catch {
    return { hwm: 0, rss: 0 };
  }
}

class VerifyFailed extends Error {}

const pad = (value, width) => String(value).padStart(width);
const ratioText = (ratio) => (ratio === null ? 'n/a (raw finished no request)' : ratio.toFixed(2));
/** p99 within P99_FACTOR × raw's at P99_AT connections (other connection counts: not judged); ratio; no errors. */
function judge(r) {
  r.p99ok = r.connections !== P99_AT || r.service.p99 <= Math.max(P99_FACTOR * r.raw.p99, 2);
  r.ok = r.ratio !== null && r.ratio >= r.target && r.p99ok && r.service.errors === 0 && r.raw.errors === 0;
  return r;
}

function table(rows) {
  const lines = [
    `| scenario | conn | service rps | raw rps | ratio | target | service p50/p99 ms | raw p50/p99 ms | p99 ≤ ${P99_FACTOR}× raw (c${P99_AT}) | errors s/r | steal s/r % | ok |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|:-:|---:|---:|:-:|',
  ];
  for (const r of rows) {
    const { p99ok, ok } = judge(r);
    lines.push(
      `| ${r.name} | ${r.connections} | ${r.service.rps} | ${r.raw.rps} | ${ratioText(r.ratio)} | ${r.target} | ${r.service.p50}/${r.service.p99} | ${r.raw.p50}/${r.raw.p99} | ${p99ok ? 'yes' : 'NO'} | ${r.service.errors}/${r.raw.errors} | ${r.service.stealPct ?? '?'}/${r.raw.stealPct ?? '?'} | ${ok ? '✓' : '✗'} |`,
    );
  }
  return lines.join('\n');
}

/**
 * One dataset's two servers, started and checked: the service and the raw server on their own ports,
 * with the dataset's scenarios, a database connection, and both servers' peak RSS kept in `peak`
 * (`{service: {rss, hwm}, raw: {rss, hwm}, idle}`).
 */
async function openSide(list, data, { ports, label, peak }) {
  await assertPortFree(ports.service);
  await assertPortFree(ports.raw);
  const service = startService(data.url, ports.service);
  const raw = startRaw(data.url, ports.raw);
  // On exit there is no time to wait: SIGKILL.
  const kill = () => {
    service.kill('SIGKILL');
    raw.kill('SIGKILL');
  };
  process.once('exit', kill);
  const close = async () => {
    await Promise.all([stopServer(service), stopServer(raw)]);
    process.removeListener('exit', kill);
  };
  try {
    const where = label ? ` (${label})` : '';
    await Promise.all([waitReady(ports.service, service, `the service${where}`), waitReady(ports.raw, raw, `the raw server${where}`)]);
    // What each process holds before any load: the part of a peak that the load did not add.
    peak.idle = { service: Math.round(memory(service.pid).rss), raw: Math.round(memory(raw.pid).rss) };
    // Same documents first: a raw server that answers something else is no yardstick.
    const differing = await verify(list, data, log, ports);
    if (differing > 0) throw new VerifyFailed(`${differing} scenario(s) answer different documents on the service and the raw server${where}`);
  } catch (error) {
    await close();
    throw error;
  }
  return { list, data, ports, label, peak, service, raw, close };
}

/**
 * Measures every scenario of each side (sides' lists matched by position), at each connection count:
 * the service then the raw server for a scenario on one side, then the same on the next side, before
 * the next scenario. A full run's sides are the 1,000,000 and 100,000-twin datasets: the scaling
 * comparison then sets a scenario's two sizes a minute apart, not the two halves of a 45-minute run
 * apart, during which a shared machine's speed drifts by more than the 10 % the comparison allows.
 * Resolves with each side's rows.
 */
async function measure(sides) {
  const dbs = await Promise.all(sides.map((side) => connect(side.data.url)));
  const sample = () => {
    // Both servers alike, every 100 ms: each row starts their VmHWM over, so a peak is read before that.
    for (const side of sides) {
      for (const who of ['service', 'raw']) {
        const m = memory(side[who].pid);
        side.peak[who].rss = Math.max(side.peak[who].rss, m.rss);
        side.peak[who].hwm = Math.max(side.peak[who].hwm, m.hwm);
      }
    }
  };
  sample(); // the peaks of start-up and verify, before the prewarm and the rows start them over
  const sampler = setInterval(sample, 100);
  // Each server's run starts on databases no longer busy with the previous run's queued requests, the
  // other side's included.
  const quiet = async (who, scenario, connections) => {
    for (const db of dbs) {
      const waitedMs = await waitQuiet(db);
      if (waitedMs > 1000) log(`bench: waited ${(waitedMs / 1000).toFixed(1)} s for the statements of the previous load to end before ${who} ${scenario.name} c=${connections}`);
    }
  };
  const rows = sides.map(() => []);
  try {
    if (prewarmSeconds > 0) await prewarm(sides, dbs);
    for (let index = 0; index < sides[0].list.length; index++) {
      for (const connections of connectionsList) {
        for (const [s, side] of sides.entries()) {
          rows[s].push(await measureRow(side, side.list[index], connections, dbs[s], quiet));
        }
      }
    }
  } finally {
    clearInterval(sampler);
    await Promise.all(dbs.map((db) => db.end()));
  }
  sample();
  return rows;
}

/** Every server through every scenario of its side for prewarmSeconds, before the first row. */
async function prewarm(sides, dbs) {
  const started = Date.now();
  for (const [s, side] of sides.entries()) {
    for (const scenario of side.list) {
      for (const port of [side.ports.service, side.ports.raw]) {
        if (scenario.pairs) scenario.pairs.restart();
        await cannon(port, scenario, connectionsList[0], prewarmSeconds);
        await waitQuiet(dbs[s]);
        // Its copies go at once: the rows before embark's own measure the quests as loaded (the feed reads them all).
        if (scenario.pairs) await resetEmbarks(dbs[s], side.data.embarkQuests);
      }
    }
  }
  log(`bench: every server ran every scenario for ${prewarmSeconds} s at ${connectionsList[0]} connections (${((Date.now() - started) / 1000).toFixed(0)} s)`);
}

/** One scenario at one connection count on one side: the service then the raw server, each warmed up. */
async function measureRow(side, scenario, connections, db, quiet) {
  const { ports, label, peak } = side;
  const servers = [
    ['service', ports.service, side.service],
    ['raw', ports.raw, side.raw],
  ];
  // Check the answer first: a scenario that fails is reported, not measured as fast errors.
  for (const [who, port, child] of servers) {
    const { path, headers } = scenario.pairs ? scenario.pairs.next() : scenario;
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { method: scenario.method ?? 'GET', headers, body: scenario.body }).catch((error) => {
      throw new Error(`the ${who} does not answer before ${scenario.name} (${child.exitCode === null ? error.cause?.code ?? error.message : `it exited with ${child.exitCode ?? child.signalCode}`})`);
    });
    if (!response.ok && response.status !== scenario.expectStatus) log(`warning: ${scenario.name} answered ${response.status} on the ${who}: ${(await response.text()).slice(0, 300)}`);
    else await response.arrayBuffer();
  }
  const result = {};
  for (const [who, port, child] of servers) {
    await quiet(who, scenario, connections);
    if (scenario.pairs) {
      // Embarks: both servers start from the same state.
      await resetEmbarks(db, side.data.embarkQuests);
      scenario.pairs.restart();
    }
    // Each server's own peak over its warm-up and measurement: the raw server's peak under the same
    // load says how much of the service's the load itself needs.
    const peakReset = resetPeak(child.pid);
    await cannon(port, scenario, connections, warmupSeconds);
    // The warm-up's last requests, abandoned when it stopped, still hold the server's pool: the
    // measurement's first requests queued behind them for up to 3 s (both servers, now and then),
    // which made p99 at 50 connections a figure of the handover, not of the server.
    await waitQuiet(db);
    const times = cpuTimes();
    result[who] = summary(await cannon(port, scenario, connections, Math.max(seconds, scenario.minSeconds ?? 0)), scenario);
    result[who].stealPct = stealPercent(times, cpuTimes());
    const m = memory(child.pid);
    if (peakReset) result[who].peakRssMb = Math.round(m.hwm);
    peak[who].hwm = Math.max(peak[who].hwm, m.hwm);
  }
  // No request of the raw server finished in the window (a slow machine, a long scenario): no ratio, not a 0.
  const ratio = result.raw.rps > 0 ? Math.round((result.service.rps / result.raw.rps) * 100) / 100 : null;
  const row = { name: scenario.name, connections, service: result.service, raw: result.raw, ratio, target: TARGETS[scenario.kind] };
  if (label) row.name = `${row.name} [${label}]`;
  log(
    `${pad(row.name, 34)} c=${pad(connections, 2)}  service ${pad(result.service.rps, 7)} rps p50 ${pad(result.service.p50, 4)} p99 ${pad(result.service.p99, 4)} err ${result.service.errors}` +
      ` | raw ${pad(result.raw.rps, 7)} rps p50 ${pad(result.raw.p50, 4)} p99 ${pad(result.raw.p99, 4)} err ${result.raw.errors} | ratio ${ratioText(ratio)} (target ${row.target})` +
      `  peak rss ${result.service.peakRssMb ?? '?'} / ${result.raw.peakRssMb ?? '?'} MB  steal ${result.service.stealPct ?? '?'} / ${result.raw.stealPct ?? '?'} %`,
  );
  return row;
}

async function main() {
  log(`bench: NODE_OPTIONS of both servers (from the Dockerfile): ${SERVICE_NODE_OPTIONS || '(none)'}; HEAP_GROWING_PERCENT of both: ${process.env.HEAP_GROWING_PERCENT ?? '50 (their default)'}`);
  log(`bench: mode ${mode}, ${seconds} s per scenario after ${warmupSeconds} s warm-up (and ${prewarmSeconds} s of each before the first), connections ${connectionsList.join(',')}; machine ${cpus().length} × ${cpus()[0]?.model}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  try {
    const client = await connect(`${base}/postgres`);
    const { rows } = await client.query(
      `SELECT current_setting('server_version_num') AS version, EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'postgis') AS postgis`,
    );
    await client.end();
    if (!rows[0].postgis) {
      log(`bench: PostGIS is not installed on that PostgreSQL server (apt-get install -y postgresql-${rows[0].version.slice(0, 2)}-postgis-3).`);
      process.exit(2);
    }
  } catch (error) {
    if (error instanceof DatabaseUnreachable) {
      log(`bench: ${error.message}\nbench: the benchmark needs a running PostgreSQL with PostGIS (set PGURL_BASE, default postgresql://postgres@127.0.0.1:5432).`);
      process.exit(2);
    }
    throw error;
  }
  if (!flag('no-build')) {
    log('bench: npm run build');
    await run('npm', ['run', 'build', '--silent'], { cwd: root });
  }

  const data = await prepare(await ensureData({ base, name: dataset(mode), mode, root, log }), log);
  // POST /events/ writes to its own twin: start each run from an empty timeline there.
  const db = await connect(data.url);
  await db.query('DELETE FROM events WHERE twin_id = $1', [data.postTwin]);
  await db.query('VACUUM ANALYZE events');
  await db.end();

  const newPeak = () => ({ service: { rss: 0, hwm: 0 }, raw: { rss: 0, hwm: 0 } });
  const peak = newPeak();
  const select = (all) => all.filter((s) => !only || only.split(',').some((part) => s.name.includes(part)));
  const list = select(scenarios(data));
  // Scaling: in a full run, the same scenarios on the 100,000-twin database too, measured beside the
  // million-twin ones (see measure); the service's rps on 1M may be at most MAX_SCALING_DROP from its
  // rps on 100k (scenarios matched by position: the geo and distance names carry dataset-specific counts).
  const withScaling = mode === 'full' && (!only || flag('scaling')) && !flag('verify');
  const small = withScaling ? await prepare(await ensureData({ base, name: dataset('quick'), mode: 'quick', root, log }), log) : undefined;
  if (!flag('verify')) {
    const settleDb = await connect(data.url);
    const settled = await settle(settleDb).finally(() => settleDb.end());
    log(`bench: PostgreSQL settled in ${(settled.ms / 1000).toFixed(1)} s (checkpoint${settled.vacuums ? `, ${settled.vacuums} autovacuum worker(s) waited for` : ''})`);
  }
  const sides = [await openSide(list, data, { ports: { service: SERVICE_PORT, raw: RAW_PORT }, peak })];
  let rows, smallRows;
  try {
    if (flag('verify')) {
      log(`bench: verify passed: ${list.length} scenarios answer the same documents on the service and the raw server (${mode} data)`);
      return;
    }
    if (small) {
      const ports = { service: SERVICE_PORT + 2, raw: RAW_PORT + 2 };
      sides.push(await openSide(select(scenarios(small)), small, { ports, label: '100k', peak: newPeak() }));
    }
    [rows, smallRows] = await measure(sides);
  } finally {
    for (const side of sides) await side.close();
  }
  const scaling = smallRows?.map((r, i) => {
    const big = rows[i];
    const change = Math.round((big.service.rps / r.service.rps - 1) * 1000) / 1000;
    return { name: big.name, connections: r.connections, p50At100k: r.service.p50, p50At1M: big.service.p50, rpsAt100k: r.service.rps, rpsAt1M: big.service.rps, rpsRatio: Math.round((big.service.rps / r.service.rps) * 100) / 100, change, ok: Math.abs(change) <= MAX_SCALING_DROP };
  });
  const page = (name, c) => rows.find((r) => r.name === name && r.connections === c);
  const deepPages = connectionsList
    .filter((c) => page('list page 1', c) && page('list page 100', c))
    .map((c) => ({ connections: c, page1Rps: page('list page 1', c).service.rps, page100Rps: page('list page 100', c).service.rps, slowdown: Math.round((page('list page 1', c).service.rps / page('list page 100', c).service.rps) * 100) / 100 }));

  // Keyset pages: the deepest page of each pair (same `depth`) against its page 1, for the service.
  const MAX_DEPTH_CHANGE = 0.1;
  const keysetDepth = [];
  for (const c of connectionsList) {
    for (const depth of new Set(list.filter((s) => s.depth).map((s) => s.depth))) {
      const [first, deep] = list.filter((s) => s.depth === depth).map((s) => page(s.name, c));
      if (!first || !deep) continue;
      const change = Math.round((deep.service.rps / first.service.rps - 1) * 1000) / 1000;
      keysetDepth.push({ list: depth, connections: c, page1: first.name, deep: deep.name, page1Rps: first.service.rps, deepRps: deep.service.rps, change, ok: Math.abs(change) <= MAX_DEPTH_CHANGE });
    }
  }

  // Peak RSS: the service's over the run against the hand-written server's over the same run.
  const peakMb = (p) => Math.round(Math.max(p.hwm, p.rss));
  const servicePeakMb = peakMb(peak.service);
  const rawPeakMb = peakMb(peak.raw);
  const peakRssRatio = rawPeakMb > 0 ? Math.round((servicePeakMb / rawPeakMb) * 100) / 100 : null;

  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root }).toString().trim();
    if (execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root }).toString().trim()) commit += '-dirty';
  } catch {}
  const result = {
    mode,
    commit,
    scenarios: rows,
    peakRssMb: servicePeakMb,
    // Beyond the required shape: the raw server's peak over the same run (each row has both servers' peaks),
    // the ratio judged, and both servers' RSS after start.
    rawPeakRssMb: rawPeakMb,
    peakRssRatio,
    idleRssMb: peak.idle,
    // Beyond the original shape: the verdicts of the targets.
    targets: { ratios: TARGETS, p99Factor: P99_FACTOR, p99AtConnections: P99_AT, maxPeakRssRatio: MAX_PEAK_RSS_RATIO, maxScalingChange: MAX_SCALING_DROP },
    ok: {
      // Every row judged (every() would stop at the first miss and leave the rest without their verdicts).
      scenarios: rows.map((r) => judge(r).ok).every(Boolean),
      peakRss: peakRssRatio !== null && peakRssRatio <= MAX_PEAK_RSS_RATIO,
      scaling: scaling ? scaling.every((s) => s.ok) : undefined,
      keysetDepth: keysetDepth.length > 0 ? keysetDepth.every((d) => d.ok) : undefined,
    },
    // Beyond the required shape: the checks that are not per-scenario ratios, and the context.
    deepPages,
    keysetDepth,
    scaling,
    data: { counts: data.counts, loadSeconds: data.loadSeconds, cachedLoadSeconds: data.cachedLoadSeconds },
    machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), loadAfter: loadavg().map((l) => Math.round(l * 100) / 100) },
    settings: { seconds, warmupSeconds, prewarmSeconds, connections: connectionsList },
    date: new Date().toISOString(),
  };
  const out = join(root, 'bench/results');
  mkdirSync(out, { recursive: true });
  if (!only) writeFileSync(join(out, 'latest.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(out, `${mode}${only ? '-partial' : ''}.json`), `${JSON.stringify(result, null, 2)}\n`);

  const markdown = table(rows);
  console.log(markdown);
  console.log(
    `\npeak RSS: service ${servicePeakMb} MB, raw server ${rawPeakMb} MB, ratio ${peakRssRatio ?? '?'} (target ≤ ${MAX_PEAK_RSS_RATIO}) ${result.ok.peakRss ? '✓' : '✗'}` +
      ` (idle after start: ${peak.idle?.service} / ${peak.idle?.raw} MB)`,
  );
  for (const d of deepPages) console.log(`page 100 vs page 1 at c=${d.connections}: ${d.slowdown}× slower (target ≤ 2)`);
  for (const d of keysetDepth) {
    console.log(`${d.deep} vs page 1 (${d.list}) at c=${d.connections}: service ${d.deepRps} vs ${d.page1Rps} rps (${(d.change * 100).toFixed(1)} %, target within ±${MAX_DEPTH_CHANGE * 100} %) ${d.ok ? '✓' : '✗'}`);
  }
  for (const s of scaling ?? []) {
    console.log(`scaling ${s.name} c=${s.connections}: service rps 1M ${s.rpsAt1M} vs 100k ${s.rpsAt100k} (${(s.change * 100).toFixed(1)} %, target within ±${MAX_SCALING_DROP * 100} %) ${s.ok ? '✓' : '✗'}`);
  }
  console.log(`\nwritten: bench/results/${only ? `${mode}-partial` : 'latest'}.json (${mode}, commit ${commit})`);
  // A benchmark verdict, not a timed test: a service that peaks above its share fails the run.
  if (!result.ok.peakRss) {
    log(`bench: the service's peak RSS is ${peakRssRatio ?? '?'}× the raw server's (target ≤ ${MAX_PEAK_RSS_RATIO})`);
    process.exitCode = 1;
  }
}

main().catch((error) => {
  log(error instanceof VerifyFailed ? `bench: ${error.message}; not measured.` : `bench failed: ${error.stack ?? error}`);
  process.exit(1);
});
