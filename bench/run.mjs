// `npm run bench [-- --quick]`: the service (production build) against the raw baseline
// (bench/raw-server.mjs: plain Fastify + pg, the service's own SQL), alternating scenario by scenario,
// at 8 and 50 connections, after a warm-up. Writes bench/results/latest.json (and <mode>.json) and
// prints a table. Figures that matter are ratios measured in the same run.
//
// Options: --quick (100,000 twins, 3 s per scenario), --only <substring> (scenarios whose name
// contains it), --connections 8,50. Environment: PGURL_BASE (postgresql://postgres@127.0.0.1:5432).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { connect, DatabaseUnreachable, ensureData, run } from './lib/load.mjs';
import { RAW_PORT, scenarios, SERVICE_NODE_OPTIONS, SERVICE_PORT, startRaw, startService, waitReady } from './lib/servers.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const autocannon = require('autocannon');

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(`--${name}`);
const option = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const mode = flag('quick') ? 'quick' : 'full';
const seconds = Number(option('duration', mode === 'quick' ? 3 : 10));
const warmupSeconds = Number(option('warmup', mode === 'quick' ? 1 : 3));
const connectionsList = option('connections', '8,50').split(',').map(Number);
const only = option('only', undefined);
const base = (process.env.PGURL_BASE ?? 'postgresql://postgres@127.0.0.1:5432').replace(/\/$/, '');
const log = (line) => process.stderr.write(`${line}\n`);

const TARGETS = {
  detail: 0.7, list: 0.7, my: 0.7, timeline: 0.7, feed: 0.7, geo: 0.85, distance: 0.85, post: 0.6,
};

function cannon(port, scenario, connections, duration) {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${port}${scenario.path}`,
        method: scenario.method ?? 'GET',
        headers: scenario.headers,
        body: scenario.body,
        connections,
        duration,
        timeout: 30,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

const summary = (r) => ({
  rps: Math.round(r.requests.average * 10) / 10,
  p50: r.latency.p50,
  p99: r.latency.p99,
  errors: r.errors + r.timeouts + r.non2xx,
});

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

const pad = (value, width) => String(value).padStart(width);
function table(rows) {
  const lines = [
    '| scenario | conn | service rps | raw rps | ratio | target | service p50/p99 ms | raw p50/p99 ms | p99 ≤ 2× raw | errors s/r | ok |',
    '|---|---:|---:|---:|---:|---:|---:|---:|:-:|---:|:-:|',
  ];
  for (const r of rows) {
    const p99ok = r.service.p99 <= Math.max(2 * r.raw.p99, 2);
    const ok = r.ratio >= r.target && p99ok && r.service.errors === 0 && r.raw.errors === 0;
    lines.push(
      `| ${r.name} | ${r.connections} | ${r.service.rps} | ${r.raw.rps} | ${r.ratio.toFixed(2)} | ${r.target} | ${r.service.p50}/${r.service.p99} | ${r.raw.p50}/${r.raw.p99} | ${p99ok ? 'yes' : 'NO'} | ${r.service.errors}/${r.raw.errors} | ${ok ? '✓' : '✗'} |`,
    );
  }
  return lines.join('\n');
}

async function measure(list, data, { label, peak }) {
  const service = startService(data.url);
  const raw = startRaw(data.url);
  const stop = () => {
    service.kill('SIGTERM');
    raw.kill('SIGTERM');
  };
  process.once('exit', stop);
  try {
    await Promise.all([waitReady(SERVICE_PORT, service, 'the service'), waitReady(RAW_PORT, raw, 'the raw server')]);
    const sampler = setInterval(() => {
      const m = memory(service.pid);
      peak.rss = Math.max(peak.rss, m.rss);
      peak.hwm = Math.max(peak.hwm, m.hwm);
    }, 100);
    const rows = [];
    try {
      for (const scenario of list) {
        for (const connections of connectionsList) {
          // Check the answer first: a scenario that fails is reported, not measured as fast errors.
          for (const [port, who] of [[SERVICE_PORT, 'service'], [RAW_PORT, 'raw']]) {
            const response = await fetch(`http://127.0.0.1:${port}${scenario.path}`, { method: scenario.method ?? 'GET', headers: scenario.headers, body: scenario.body });
            if (!response.ok) log(`warning: ${scenario.name} answered ${response.status} on the ${who}: ${(await response.text()).slice(0, 300)}`);
            else await response.arrayBuffer();
          }
          const result = {};
          // Alternate: service then raw for this scenario and connection count, each warmed up.
          for (const [port, who] of [[SERVICE_PORT, 'service'], [RAW_PORT, 'raw']]) {
            await cannon(port, scenario, connections, warmupSeconds);
            result[who] = summary(await cannon(port, scenario, connections, seconds));
          }
          const ratio = result.raw.rps > 0 ? Math.round((result.service.rps / result.raw.rps) * 100) / 100 : 0;
          const row = { name: scenario.name, connections, service: result.service, raw: result.raw, ratio, target: TARGETS[scenario.kind] };
          if (label) row.name = `${row.name} [${label}]`;
          rows.push(row);
          log(
            `${pad(row.name, 34)} c=${pad(connections, 2)}  service ${pad(result.service.rps, 7)} rps p50 ${pad(result.service.p50, 4)} p99 ${pad(result.service.p99, 4)} err ${result.service.errors}` +
              ` | raw ${pad(result.raw.rps, 7)} rps p50 ${pad(result.raw.p50, 4)} p99 ${pad(result.raw.p99, 4)} err ${result.raw.errors} | ratio ${ratio.toFixed(2)} (target ${row.target})  rss ${memory(service.pid).rss.toFixed(0)} MB`,
          );
        }
      }
    } finally {
      clearInterval(sampler);
    }
    const m = memory(service.pid);
    peak.rss = Math.max(peak.rss, m.rss);
    peak.hwm = Math.max(peak.hwm, m.hwm);
    return rows;
  } finally {
    stop();
    process.removeListener('exit', stop);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function main() {
  log(`bench: NODE_OPTIONS of both servers (from the Dockerfile): ${SERVICE_NODE_OPTIONS || '(none)'}`);
  log(`bench: mode ${mode}, ${seconds} s per scenario after ${warmupSeconds} s warm-up, connections ${connectionsList.join(',')}; machine ${cpus().length} × ${cpus()[0]?.model}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
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

  const data = await ensureData({ base, name: `twin_bench_${mode}`, mode, root, log });
  // POST /events/ writes to its own twin: start each run from an empty timeline there.
  const db = await connect(data.url);
  await db.query('DELETE FROM events WHERE twin_id = $1', [data.postTwin]);
  await db.query('VACUUM ANALYZE events');
  await db.end();

  const peak = { rss: 0, hwm: 0 };
  const list = scenarios(data).filter((s) => !only || s.name.includes(only));
  const rows = await measure(list, data, { peak });

  // Scaling: in a full run, the first list page and page 100 on the 100,000-twin database too.
  let scaling;
  if (mode === 'full' && !only) {
    const small = await ensureData({ base, name: 'twin_bench_quick', mode: 'quick', root, log });
    const smallRows = await measure(scenarios(small).filter((s) => s.kind === 'list'), small, { label: '100k', peak: { rss: 0, hwm: 0 } });
    scaling = smallRows.map((r) => {
      const big = rows.find((b) => b.name === r.name.replace(' [100k]', '') && b.connections === r.connections);
      return { name: r.name.replace(' [100k]', ''), connections: r.connections, p50At100k: r.service.p50, p50At1M: big.service.p50, rpsAt100k: r.service.rps, rpsAt1M: big.service.rps, latencyRatio: Math.round((r.service.rps / big.service.rps) * 100) / 100 };
    });
  }
  const page = (name, c) => rows.find((r) => r.name === name && r.connections === c);
  const deepPages = connectionsList
    .filter((c) => page('list page 1', c) && page('list page 100', c))
    .map((c) => ({ connections: c, page1Rps: page('list page 1', c).service.rps, page100Rps: page('list page 100', c).service.rps, slowdown: Math.round((page('list page 1', c).service.rps / page('list page 100', c).service.rps) * 100) / 100 }));

  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root }).toString().trim();
    if (execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root }).toString().trim()) commit += '-dirty';
  } catch {}
  const result = {
    mode,
    commit,
    scenarios: rows,
    peakRssMb: Math.round(Math.max(peak.hwm, peak.rss)),
    // Beyond the required shape: the checks that are not per-scenario ratios, and the context.
    deepPages,
    scaling,
    data: { counts: data.counts, loadSeconds: data.loadSeconds, cachedLoadSeconds: data.cachedLoadSeconds },
    machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), loadAfter: loadavg().map((l) => Math.round(l * 100) / 100) },
    settings: { seconds, warmupSeconds, connections: connectionsList },
    date: new Date().toISOString(),
  };
  const out = join(root, 'bench/results');
  mkdirSync(out, { recursive: true });
  if (!only) writeFileSync(join(out, 'latest.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(out, `${mode}${only ? '-partial' : ''}.json`), `${JSON.stringify(result, null, 2)}\n`);

  const markdown = table(rows);
  console.log(markdown);
  console.log(`\npeak RSS of the service: ${result.peakRssMb} MB (target ≤ 250)`);
  for (const d of deepPages) console.log(`page 100 vs page 1 at c=${d.connections}: ${d.slowdown}× slower (target ≤ 2)`);
  for (const s of scaling ?? []) console.log(`${s.name} c=${s.connections}: 1M vs 100k ${s.latencyRatio}× (rps ${s.rpsAt1M} vs ${s.rpsAt100k}; target ≤ 1.5)`);
  console.log(`\nwritten: bench/results/${only ? `${mode}-partial` : 'latest'}.json (${mode}, commit ${commit})`);
}

main().catch((error) => {
  log(`bench failed: ${error.stack ?? error}`);
  process.exit(1);
});
