// `node bench/ogc.mjs`: the OGC API's items pages (`GET /ogc/collections/twins/items`) on the million-twin
// bench database (twin_bench_full), the service (production build, dist/, its own PORT, METRICS_PORT off)
// against the hand-written baseline bench/raw-ogc.mjs (Fastify + pg, none of the service's code), and
// against the service's own geo listing of the same box. Rows:
//   geo listing ~1k        GET /twins/?in_bbox=<box>&page_size=1000 (application/geo+json), the service only
//   items ~1k, lean        the same box, limit=1000, properties=name,description: what the geo listing shows
//   items ~1k, all         the same box, limit=1000, every property (the list form's attributes: a few kB a twin)
//   page 1 / deep page     no box, limit=1000, lean: the first page and the page after the 500,000th visible twin
//   CQL2 S_INTERSECTS ~1k  filter=S_INTERSECTS(geometry, POLYGON(<the box>)), limit=1000, lean and all
// Per round, for each row and --connections (1,8), the service and the baseline in turn (the first
// alternating from round to round), closed loops of --seconds (6) after --warmup (2): requests/s,
// p50/p99. Then the ratios: items lean / geo listing (service vs service), service / baseline per row,
// deep / first page, and the CQL2 rows' latency at 1 connection; and EXPLAIN (ANALYZE) of the spatial
// filter's statement shape: the GiST index answers it. Before measuring, each row is asked once of both
// servers and their features compared (the baseline must do the same work).
//
// Options: --rounds (2), --seconds, --warmup, --connections, --port (3360; the baseline port + 1),
// --database (twin_bench_full), --label, --no-build. Machine load: the load averages before and after
// each run are recorded (run it holding the bench lock: docs/PERFORMANCE.md). Results: bench/results/ogc.json
// (runs appended) and a table.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { flag, option } from './lib/args.mjs';
import { closedLoop, device } from './lib/fleet-load.mjs';
import { BENCH_CURSOR_SECRET, SERVICE_NODE_OPTIONS, assertPortFree, benchCursor, startService, stopServer, waitReady } from './lib/servers.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const log = (line) => process.stderr.write(`${line}\n`);
const num = (name, fallback) => Number(option(name, fallback));
const settings = { rounds: num('rounds', 2), seconds: num('seconds', 6), warmup: num('warmup', 2), connections: option('connections', '1,8').split(',').map(Number) };
const PORT = num('port', 3360);
const RAW_PORT = PORT + 1;
const base = (process.env.PGURL_BASE ?? 'postgresql://postgres@127.0.0.1:5432').replace(/\/$/, '');
const database = option('database', 'twin_bench_full');
const url = `${base}/${database}`;
const label = option('label', new Date().toISOString().slice(0, 16));
const load = () => loadavg().map((v) => v.toFixed(2)).join(' ');
const r2 = (v) => (v === null || v === undefined || !Number.isFinite(v) ? null : Math.round(v * 100) / 100);
const ITEMS = '/ogc/collections/twins/items';
const LEAN = 'properties=name,description';

async function main() {
  if (!flag('no-build')) execFileSync(process.execPath, [join(root, 'scripts/build.mjs'), '--if-changed', '--quiet'], { stdio: 'inherit' });
  const db = new pg.Client({ connectionString: url, application_name: 'bench-ogc' });
  await db.connect();
  const info = (await db.query(`SELECT value FROM bench_meta WHERE key = 'dataset'`)).rows[0]?.value?.info;
  if (!info) throw new Error(`${database} holds no bench dataset (bench_meta): load it with npm run bench first`);
  const [west, south, east, north] = info.geo1k.box.split(',');
  const polygon = `POLYGON((${west} ${south}, ${east} ${south}, ${east} ${north}, ${west} ${north}, ${west} ${south}))`;
  // The 500,000th visible located twin in id order: where the deep page starts.
  const visible = `t.location IS NOT NULL AND (t.public OR cardinality(t.services) > 0 OR t.organization_id = $1)`;
  const deep = (await db.query(`SELECT t.id::text AS id FROM twins t WHERE ${visible} ORDER BY t.id OFFSET 500000 LIMIT 1`, [info.organizationId])).rows[0].id;
  const explain = (await db.query(
    `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT t.id FROM twins t WHERE ${visible} AND ST_Intersects(t.location, ST_SetSRID(ST_GeomFromGeoJSON($2::text), 4326)) ORDER BY t.id LIMIT 1001`,
    [info.organizationId, JSON.stringify({ type: 'Polygon', coordinates: [[[+west, +south], [+east, +south], [+east, +north], [+west, +north], [+west, +south]]] })],
  )).rows.map((row) => row['QUERY PLAN']);
  await db.end();

  const headers = { authorization: `Token ${info.token}`, 'x-organization': info.organizationId };
  const filter = (properties) => `${ITEMS}?limit=1000${properties}&filter=${encodeURIComponent(`S_INTERSECTS(geometry, ${polygon})`)}`;
  const rows = [
    { name: `geo listing ~1k (${info.geo1k.count})`, key: 'geo', path: `/twins/?in_bbox=${info.geo1k.box}&page_size=1000`, headers: { ...headers, accept: 'application/geo+json' }, serviceOnly: true },
    { name: 'items ~1k, lean', key: 'lean', path: `${ITEMS}?bbox=${info.geo1k.box}&limit=1000&${LEAN}` },
    { name: 'items ~1k, all properties', key: 'all', path: `${ITEMS}?bbox=${info.geo1k.box}&limit=1000` },
    { name: 'page 1 (no box), lean', key: 'first', path: `${ITEMS}?limit=1000&${LEAN}` },
    { name: 'deep page (after 500,000), lean', key: 'deep', path: `${ITEMS}?limit=1000&${LEAN}&page_after=${benchCursor('ogc-twins:id', [deep])}` },
    { name: 'CQL2 S_INTERSECTS ~1k, lean', key: 'cql-lean', path: filter(`&${LEAN}`) },
    { name: 'CQL2 S_INTERSECTS ~1k, all', key: 'cql-all', path: filter('') },
  ].map((row) => ({ headers, ...row }));

  await assertPortFree(PORT);
  await assertPortFree(RAW_PORT);
  const service = startService(url, PORT);
  const raw = spawn(process.execPath, [join(root, 'bench/raw-ogc.mjs')], {
    env: { ...process.env, NODE_OPTIONS: SERVICE_NODE_OPTIONS, NODE_ENV: 'production', DATABASE_URL: url, PORT: String(RAW_PORT), CURSOR_SECRET: BENCH_CURSOR_SECRET },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const result = { label, database, settings, cores: cpus().length, loadBefore: load(), deepPosition: deep, explain, cells: [], verify: [] };
  try {
    await waitReady(PORT, service, 'the service');
    await waitReady(RAW_PORT, raw, 'the baseline');

    // Both servers answer each row with the same features (and link relations).
    const probe = device(PORT);
    const probeRaw = device(RAW_PORT);
    for (const row of rows) {
      const a = await probe.send('GET', row.path, row.headers);
      if (a.status !== 200) throw new Error(`${row.name}: the service answered ${a.status} ${a.text.slice(0, 300)}`);
      const features = JSON.parse(a.text).features ?? JSON.parse(a.text).data?.results?.features;
      let same = null;
      if (!row.serviceOnly) {
        const b = await probeRaw.send('GET', row.path, row.headers);
        if (b.status !== 200) throw new Error(`${row.name}: the baseline answered ${b.status} ${b.text.slice(0, 300)}`);
        const [sa, sb] = [JSON.parse(a.text), JSON.parse(b.text)];
        same = JSON.stringify(sa.features) === JSON.stringify(sb.features) && sa.numberReturned === sb.numberReturned && sa.links.map((l) => l.rel).join() === sb.links.map((l) => l.rel).join();
        if (!same) throw new Error(`${row.name}: the service and the baseline answer different documents`);
      }
      result.verify.push({ row: row.name, features: features.length, bytes: a.bytes, same });
      log(`verify: ${row.name}: ${features.length} features, ${Math.round(a.bytes / 1024)} kB${same === null ? '' : ', the same from both'}`);
    }
    probe.close();
    probeRaw.close();

    for (let round = 1; round <= settings.rounds; round++) {
      for (const row of rows) {
        for (const connections of settings.connections) {
          const servers = row.serviceOnly ? [['service', PORT]] : round % 2 === 1 ? [['service', PORT], ['raw', RAW_PORT]] : [['raw', RAW_PORT], ['service', PORT]];
          for (const [server, port] of servers) {
            const measured = await closedLoop({
              port,
              devices: connections,
              next: () => ({ path: row.path, headers: row.headers }),
              ok: (answer) => answer.status === 200,
              warmup: settings.warmup,
              seconds: settings.seconds,
              discard: true,
            });
            result.cells.push({ round, row: row.key, name: row.name, connections, server, perSecond: measured.perSecond, p50: measured.p50, p99: measured.p99, errors: measured.errors });
            log(`round ${round} ${row.name} c=${connections} ${server}: ${measured.perSecond}/s p50 ${measured.p50} ms p99 ${measured.p99} ms${measured.errors ? ` ERRORS ${measured.errors} ${JSON.stringify(measured.errorKinds)}` : ''}`);
          }
        }
      }
    }
  } finally {
    await stopServer(service);
    await stopServer(raw);
  }
  result.loadAfter = load();

  // Means over rounds, then the ratios.
  const mean = (row, server, connections, field = 'perSecond') => {
    const cells = result.cells.filter((c) => c.row === row && c.server === server && c.connections === connections);
    return cells.length ? cells.reduce((s, c) => s + c[field], 0) / cells.length : null;
  };
  const table = [];
  for (const connections of settings.connections) {
    for (const row of rows) {
      const s = mean(row.key, 'service', connections);
      const b = row.serviceOnly ? null : mean(row.key, 'raw', connections);
      table.push({ row: row.name, connections, service: r2(s), baseline: r2(b), 'service/baseline': b ? r2(s / b) : null, p50: r2(mean(row.key, 'service', connections, 'p50')), p99: r2(mean(row.key, 'service', connections, 'p99')) });
    }
  }
  result.table = table;
  result.ratios = Object.fromEntries(
    settings.connections.map((c) => [
      `c=${c}`,
      {
        'items lean / geo listing (service)': r2(mean('lean', 'service', c) / mean('geo', 'service', c)),
        'deep / first page (service)': r2(mean('deep', 'service', c) / mean('first', 'service', c)),
        'deep / first page (baseline)': r2(mean('deep', 'raw', c) / mean('first', 'raw', c)),
        'CQL2 lean p50 / p99 ms (service)': [r2(mean('cql-lean', 'service', c, 'p50')), r2(mean('cql-lean', 'service', c, 'p99'))],
        'CQL2 all p50 / p99 ms (service)': [r2(mean('cql-all', 'service', c, 'p50')), r2(mean('cql-all', 'service', c, 'p99'))],
      },
    ]),
  );
  console.table(table);
  console.log(JSON.stringify(result.ratios, null, 1));
  console.log(explain.join('\n'));
  log(`load before ${result.loadBefore}, after ${result.loadAfter}`);
  const file = join(root, 'bench/results/ogc.json');
  const saved = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { runs: [] };
  saved.runs.push(result);
  writeFileSync(file, `${JSON.stringify(saved, null, 2)}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
