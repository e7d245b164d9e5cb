// Issue 3's figures: median latency of twin reads through the service, next to the very SQL those
// requests run, executed directly (round trip from a pg client, like psql \timing) and under
// EXPLAIN (ANALYZE, BUFFERS) (server execution time).
//
// The SQL is captured, not retyped: the production build's TwinsService and repositories run against a
// recording stand-in of the DataSource, so what is timed is exactly what the service sends.
//
//   npm run build
//   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/twin_bench node bench/twins-latency.mjs [--runs 30]
//
// Starts the service (production build, NODE_ENV=production) on a free port against DATABASE_URL,
// bootstraps a tenant there, picks an imported public twin and two bounding boxes holding about 1,000
// and 10,000 located twins, and prints a table (also written to bench/results/twins-latency.json).
import { spawn, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const dist = (path) => require(join(root, 'dist/src', path));
const { Pool } = require('pg');
const { installPgTypeParsers } = dist('database/timestamps.js');
const { loadConfig } = dist('config/app-config.js');
const { TwinsRepository } = dist('twins/twins.repository.js');
const { TwinsService } = dist('twins/twins.service.js');
const { AuthRepository } = dist('common/auth/auth.repository.js');

const { values } = parseArgs({ options: { runs: { type: 'string', default: '30' } } });
const RUNS = Number(values.runs);
const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL) {
  console.error('DATABASE_URL must name the PostgreSQL database holding the twins (e.g. the 1M-twin bench database).');
  process.exit(2);
}

installPgTypeParsers();
const pool = new Pool({ connectionString: DATABASE_URL, max: 2, options: '-c TimeZone=UTC' });
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;
const round = (x) => Math.round(x * 100) / 100;

async function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Runs `work` with a TwinsService whose database calls are recorded (and executed). */
async function captureSql(work) {
  const statements = [];
  const query = async (sql, params = []) => {
    statements.push({ sql, params });
    return (await pool.query(sql, params)).rows;
  };
  const db = { query, manager: { query } };
  const config = loadConfig({ DATABASE_URL });
  const service = new TwinsService(new TwinsRepository(db), config);
  await work(service);
  return statements;
}

async function timeSql({ sql, params }) {
  const times = [];
  for (let i = 0; i < 3; i++) await pool.query(sql, params);
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    await pool.query(sql, params);
    times.push(ms(start));
  }
  const plan = (await pool.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params)).rows[0]['QUERY PLAN'][0];
  return { roundTripMs: median(times), executionMs: plan['Execution Time'], planningMs: plan['Planning Time'] };
}

async function timeHttp(url, headers) {
  const times = [];
  let bytes = 0;
  for (let i = 0; i < 5 + RUNS; i++) {
    const start = process.hrtime.bigint();
    const response = await fetch(url, { headers });
    const body = await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${url}: ${response.status} ${Buffer.from(body).toString().slice(0, 300)}`);
    if (i >= 5) times.push(ms(start));
    bytes = body.byteLength;
  }
  return { medianMs: median(times), bytes };
}

/** A square box around a city centre holding about `target` located twins (count via the GiST index). */
async function bboxAround(lon, lat, target) {
  let lo = 0.0005;
  let hi = 2;
  for (let i = 0; i < 25; i++) {
    const d = (lo + hi) / 2;
    const { rows } = await pool.query(
      'SELECT count(*)::int AS n FROM twins WHERE location && ST_MakeEnvelope($1, $2, $3, $4, 4326)',
      [lon - d, lat - d, lon + d, lat + d],
    );
    if (rows[0].n < target) lo = d;
    else hi = d;
    if (Math.abs(rows[0].n - target) / target < 0.03) return [lon - d, lat - d, lon + d, lat + d].map((x) => x.toFixed(5)).join(',');
  }
  return [lon - hi, lat - hi, lon + hi, lat + hi].map((x) => x.toFixed(5)).join(',');
}

async function main() {
  const { rows: totals } = await pool.query('SELECT count(*)::int AS twins FROM twins');
  const port = await freePort();
  const env = { ...process.env, NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0' };
  const tenant = JSON.parse(execFileSync('node', [join(root, 'dist/src/cli/main.js'), 'bootstrap', '--json', '--organization', 'Latency probe'], { env }).toString());
  const service = spawn('node', [join(root, 'dist/src/main.js')], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 200; i++) {
      try {
        if ((await fetch(`${base}/health`)).ok) break;
      } catch {
        /* not listening yet */
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const headers = { authorization: `Token ${tenant.token}`, 'x-organization': tenant.organizationId };
    const caller = { account: { id: tenant.accountId, name: '' }, organization: { id: tenant.organizationId, name: '' }, tokenId: tenant.tokenId };
    const { rows: picked } = await pool.query('SELECT id FROM twins WHERE public AND location IS NOT NULL ORDER BY id LIMIT 1 OFFSET 1000');
    const detailId = picked[0].id;
    // Paris is one of the generator's cities; its cluster holds thousands of places at 1M.
    const bbox1k = await bboxAround(2.3522, 48.8566, 1000);
    const bbox10k = await bboxAround(2.3522, 48.8566, 10000);
    const geoUrl = (bbox, size) => `/twins/?in_bbox=${bbox}&page_size=${size}`;

    const scenarios = [
      { name: 'list, first page', path: '/twins/', run: (s) => s.list(caller, {}) },
      { name: 'list, page 100', path: '/twins/?page_number=100', run: (s) => s.list(caller, { page_number: '100' }) },
      { name: 'twin detail', path: `/twins/${detailId}/`, run: (s) => s.get(caller, detailId) },
      { name: 'geo listing ~1,000 in bbox', path: geoUrl(bbox1k, 1000), geo: true, run: (s) => s.geoList(caller, { in_bbox: bbox1k, page_size: '1000' }, new URL(base + geoUrl(bbox1k, 1000))) },
      { name: 'geo listing ~10,000 in bbox', path: geoUrl(bbox10k, 10000), geo: true, run: (s) => s.geoList(caller, { in_bbox: bbox10k, page_size: '10000' }, new URL(base + geoUrl(bbox10k, 10000))) },
    ];
    // Every request also resolves its token, membership and twin in one query.
    const authStatements = await (async () => {
      const statements = [];
      const query = async (sql, params = []) => {
        statements.push({ sql, params });
        return (await pool.query(sql, params)).rows;
      };
      await new AuthRepository({ query }).resolve(tenant.token, tenant.organizationId, undefined);
      return statements;
    })();
    const auth = await timeSql(authStatements[0]);

    const results = [];
    for (const scenario of scenarios) {
      const http = await timeHttp(base + scenario.path, scenario.geo ? { ...headers, accept: 'application/geo+json' } : headers);
      const statements = await captureSql(scenario.run);
      const timings = [];
      for (const statement of statements) timings.push(await timeSql(statement));
      results.push({
        name: scenario.name,
        path: scenario.path,
        httpMedianMs: round(http.medianMs),
        responseBytes: http.bytes,
        statements: statements.length + 1,
        sqlRoundTripMs: round(auth.roundTripMs + timings.reduce((sum, t) => sum + t.roundTripMs, 0)),
        sqlExecutionMs: round(auth.executionMs + timings.reduce((sum, t) => sum + t.executionMs, 0)),
        routeSql: statements.map((s, i) => ({ sql: s.sql.replace(/\s+/g, ' ').trim(), ...Object.fromEntries(Object.entries(timings[i]).map(([k, v]) => [k, round(v)])) })),
      });
    }

    const report = { twins: totals[0].twins, runs: RUNS, auth: { roundTripMs: round(auth.roundTripMs), executionMs: round(auth.executionMs) }, bbox1k, bbox10k, results };
    mkdirSync(join(root, 'bench/results'), { recursive: true });
    writeFileSync(join(root, 'bench/results/twins-latency.json'), JSON.stringify(report, null, 2));
    console.log(`twins in the database: ${report.twins}; ${RUNS} timed runs each (medians); auth lookup: ${report.auth.roundTripMs} ms round trip, ${report.auth.executionMs} ms execution`);
    console.log('| scenario | HTTP median ms | same SQL, round trips ms | same SQL, EXPLAIN ANALYZE execution ms | statements | response bytes |');
    console.log('|---|---|---|---|---|---|');
    for (const r of results) console.log(`| ${r.name} | ${r.httpMedianMs} | ${r.sqlRoundTripMs} | ${r.sqlExecutionMs} | ${r.statements} | ${r.responseBytes} |`);
  } finally {
    service.kill('SIGTERM');
    await pool.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
