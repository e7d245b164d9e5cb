// `npm run bench:tiles [-- --quick] [--no-build] [--rounds N] [--filter-rounds N]`: vector tiles per zoom,
// the service (production build) against the raw server's tile route (bench/raw-server.mjs: the same
// SQL ideas, no framework), on the bench's data (a million twins in full mode). For every zoom 0-16,
// tiles over populated places (the tile of a random visible twin) and random ones (mostly empty beyond
// zoom 6), shuffled and requested at 8 connections (`--connections`), the two servers alternating round
// by round. Prints per zoom the median and p99 latency of each and its worst tile (the highest of the
// tiles' median over the rounds), the overall figures and the throughput ratio; then the service alone
// with each list filter of GET /twins/ (the kept grid answers is_public and is_supplier; the others are
// counted live), per zoom. Writes bench/results/tiles-<mode>.json.
import http from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, ensureData, prepare, run } from './lib/load.mjs';
import { assertPortFree, RAW_PORT, SERVICE_PORT, startRaw, startService, stopServer, waitReady } from './lib/servers.mjs';
import { flag, option } from './lib/args.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const mode = flag('quick') ? 'quick' : 'full';
const connections = Number(option('connections', 8));
const rounds = Number(option('rounds', 3));
const filterRounds = Number(option('filter-rounds', 2));
const PER_ZOOM = Number(option('per-zoom', 12));
const ZOOMS = Array.from({ length: 17 }, (_, z) => z);
const log = (message) => process.stderr.write(`${message}\n`);

/** Deterministic shuffling and sampling: the same tiles for both servers and across runs. */
function random(seed) {
  let state = seed >>> 0;
  return () => ((state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32);
}

const tileOf = (lon, lat, z) => {
  const n = 2 ** z;
  const fy = (1 - Math.log(Math.tan((lat * Math.PI) / 180) + 1 / Math.cos((lat * Math.PI) / 180)) / Math.PI) / 2;
  return [z, Math.min(n - 1, Math.floor(((lon + 180) / 360) * n)), Math.min(n - 1, Math.max(0, Math.floor(fy * n)))];
};

async function pickTiles(url, organizationId) {
  const db = await connect(url);
  try {
    const { rows } = await db.query(
      `SELECT ST_X(location) AS lon, ST_Y(location) AS lat FROM twins TABLESAMPLE SYSTEM (2) REPEATABLE (17)
        WHERE location IS NOT NULL AND (public OR cardinality(services) > 0 OR organization_id = $1) LIMIT 2000`,
      [organizationId],
    );
    const next = random(42);
    const tiles = [];
    for (const z of ZOOMS) {
      for (let i = 0; i < PER_ZOOM; i++) {
        const twin = rows[Math.floor(next() * rows.length)];
        tiles.push({ kind: 'populated', tile: tileOf(twin.lon, twin.lat, z) });
        const n = 2 ** z;
        tiles.push({ kind: 'random', tile: [z, Math.floor(next() * n), Math.floor(next() * n)] });
      }
    }
    return tiles;
  } finally {
    await db.end();
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function get(port, path, headers) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const request = http.get({ host: '127.0.0.1', port, path, headers, agent }, (response) => {
      let bytes = 0;
      response.on('data', (chunk) => (bytes += chunk.length));
      response.on('end', () => resolve({ status: response.statusCode, bytes, ms: Number(process.hrtime.bigint() - started) / 1e6 }));
    });
    request.on('error', reject);
  });
}

/** Every tile of `list` once, `connections` at a time; latencies by zoom and by tile. */
async function sweep(port, list, headers, query = '') {
  const byZoom = new Map(ZOOMS.map((z) => [z, []]));
  const byTile = new Map();
  const statuses = {};
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < list.length) {
        const { tile } = list[next++];
        const answer = await get(port, `/twins/tiles/${tile.join('/')}.mvt${query}`, headers);
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        byZoom.get(tile[0]).push(answer.ms);
        const key = tile.join('/');
        byTile.set(key, [...(byTile.get(key) ?? []), answer.ms]);
      }
    }),
  );
  return { byZoom, byTile, statuses, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

const quantile = (values, q) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
};
const merge = (sweeps) => {
  const byZoom = new Map(ZOOMS.map((z) => [z, sweeps.flatMap((s) => s.byZoom.get(z))]));
  const byTile = new Map();
  for (const s of sweeps) for (const [key, ms] of s.byTile) byTile.set(key, [...(byTile.get(key) ?? []), ...ms]);
  // Per zoom, the tile whose median over the rounds is highest.
  const worst = new Map(ZOOMS.map((z) => [z, { tile: undefined, median: 0 }]));
  for (const [key, ms] of byTile) {
    const z = Number(key.split('/')[0]);
    const median = quantile(ms, 0.5);
    if (median > worst.get(z).median) worst.set(z, { tile: key, median });
  }
  const statuses = {};
  for (const s of sweeps) for (const [k, v] of Object.entries(s.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  return { byZoom, worst, statuses, seconds: sweeps.reduce((sum, s) => sum + s.seconds, 0), all: [...byZoom.values()].flat() };
};
const round1 = (v) => Math.round(v * 10) / 10;

async function main() {
  if (!flag('no-build')) await run('npm', ['run', 'build', '--silent'], { cwd: root });
  const base = process.env.PGURL_BASE ?? 'postgresql://postgres@127.0.0.1:5432';
  const data = await prepare(await ensureData({ base, name: `twin_bench_${mode}`, mode, root, log }), log);
  const headers = { authorization: `Token ${data.token}`, 'x-organization': data.organizationId, 'accept-encoding': 'gzip' };
  const tiles = await pickTiles(data.url, data.organizationId);
  const shuffled = (seed) => {
    const next = random(seed);
    return tiles.map((t) => [next(), t]).sort((a, b) => a[0] - b[0]).map(([, t]) => t);
  };
  log(`tiles: ${tiles.length} tiles (zooms 0-16, ${PER_ZOOM} populated and ${PER_ZOOM} random each), ${rounds} rounds per server at ${connections} connections, ${mode} data`);

  await assertPortFree(SERVICE_PORT);
  await assertPortFree(RAW_PORT);
  const service = startService(data.url);
  const raw = startRaw(data.url);
  const results = { service: [], raw: [] };
  const filtered = {};
  try {
    await waitReady(SERVICE_PORT, service, 'service');
    await waitReady(RAW_PORT, raw, 'raw server');
    // Both answer the same tile, byte for byte (same features, same order), for every tile of the list.
    const plain = { authorization: headers.authorization, 'x-organization': headers['x-organization'] };
    const fetchBody = (port, tile) =>
      new Promise((resolve, reject) => {
        http.get({ host: '127.0.0.1', port, path: `/twins/tiles/${tile.join('/')}.mvt`, headers: plain, agent }, (response) => {
          const chunks = [];
          response.on('data', (chunk) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode, body: Buffer.concat(chunks) }));
        }).on('error', reject);
      });
    const differing = [];
    for (const { tile } of tiles) {
      const [a, b] = [await fetchBody(SERVICE_PORT, tile), await fetchBody(RAW_PORT, tile)];
      if (a.status !== b.status || !a.body.equals(b.body)) differing.push(`${tile.join('/')}: ${a.status} ${a.body.length} B vs ${b.status} ${b.body.length} B`);
    }
    if (differing.length > 0) throw new Error(`tiles: the service and the raw server answer ${differing.length} tiles differently, e.g. ${differing.slice(0, 5).join('; ')}`);
    log(`tiles: verified: both servers answer the same ${tiles.length} tiles byte for byte`);
    // Warm-up: one sweep each (prepares the statements on the pooled connections, fills the caches).
    await sweep(SERVICE_PORT, shuffled(1), headers);
    await sweep(RAW_PORT, shuffled(1), headers);
    for (let r = 0; r < rounds; r++) {
      results.service.push(await sweep(SERVICE_PORT, shuffled(100 + r), headers));
      results.raw.push(await sweep(RAW_PORT, shuffled(100 + r), headers));
    }
    // Every list filter of GET /twins/, each way (is_connection refers to the bench's twin of 200 connections).
    const withTwin = { ...headers, 'x-twin': data.connectedTwin };
    for (const [name, query, filterHeaders] of [
      ['is_public=true', '?is_public=true', headers],
      ['is_public=false', '?is_public=false', headers],
      ['is_supplier=true', '?is_supplier=true', headers],
      ['characteristics=outdoors', '?characteristics=outdoors', headers],
      ['characteristics=indoors', '?characteristics=indoors', headers],
      ['organization=<a provider>', `?organization=${data.providerOrg}`, headers],
      ['organization=<own>', `?organization=${data.organizationId}`, headers],
      ['is_personal=true', '?is_personal=true', headers],
      ['is_personal=false', '?is_personal=false', headers],
      ['is_connection=true', '?is_connection=true', withTwin],
      ['is_connection=false', '?is_connection=false', withTwin],
    ]) {
      const sweeps = [];
      for (let r = 0; r < filterRounds; r++) sweeps.push(await sweep(SERVICE_PORT, shuffled(7 + r), filterHeaders, query));
      filtered[name] = merge(sweeps);
      log(`tiles: ${name}: p99 ${round1(quantile(filtered[name].all, 0.99))} ms, worst tile ${[...filtered[name].worst.values()].reduce((a, b) => (b.median > a.median ? b : a)).tile}`);
    }
  } finally {
    await stopServer(service);
    await stopServer(raw);
  }

  const s = merge(results.service);
  const r = merge(results.raw);
  const lines = ['| zoom | service median ms | service p99 ms | service worst tile ms | raw median ms | raw p99 ms | raw worst tile ms |', '|---:|---:|---:|---:|---:|---:|---:|'];
  for (const z of ZOOMS) {
    const row = (m) => `${round1(quantile(m.byZoom.get(z), 0.5))} | ${round1(quantile(m.byZoom.get(z), 0.99))} | ${round1(m.worst.get(z).median)}`;
    lines.push(`| ${z} | ${row(s)} | ${row(r)} |`);
  }
  const maxWorst = (m) => round1(Math.max(...[...m.worst.values()].map((w) => w.median)));
  lines.push(`| all | ${round1(quantile(s.all, 0.5))} | ${round1(quantile(s.all, 0.99))} | ${maxWorst(s)} | ${round1(quantile(r.all, 0.5))} | ${round1(quantile(r.all, 0.99))} | ${maxWorst(r)} |`);
  const throughput = { service: s.all.length / s.seconds, raw: r.all.length / r.seconds };
  lines.push('', `throughput: service ${Math.round(throughput.service)} tiles/s, raw ${Math.round(throughput.raw)} tiles/s, ratio ${round1((throughput.service / throughput.raw) * 100) / 100}`);
  lines.push(`statuses: service ${JSON.stringify(s.statuses)}, raw ${JSON.stringify(r.statuses)}`);
  lines.push('', '| service, filtered | median ms | p99 ms | worst zoom: p99 ms | worst tile ms | statuses |', '|---|---:|---:|---|---:|---|');
  for (const [name, f] of Object.entries(filtered)) {
    const zoomP99 = ZOOMS.map((z) => [z, quantile(f.byZoom.get(z), 0.99)]).reduce((a, b) => (b[1] > a[1] ? b : a));
    lines.push(`| ${name} | ${round1(quantile(f.all, 0.5))} | ${round1(quantile(f.all, 0.99))} | ${zoomP99[0]}: ${round1(zoomP99[1])} | ${maxWorst(f)} | ${JSON.stringify(f.statuses)} |`);
  }
  console.log(lines.join('\n'));

  mkdirSync(join(root, 'bench/results'), { recursive: true });
  const summary = (m) => ({
    median: quantile(m.all, 0.5),
    p99: quantile(m.all, 0.99),
    byZoom: Object.fromEntries(ZOOMS.map((z) => [z, { median: quantile(m.byZoom.get(z), 0.5), p99: quantile(m.byZoom.get(z), 0.99), worstTile: m.worst.get(z) }])),
    statuses: m.statuses,
  });
  writeFileSync(
    join(root, `bench/results/tiles-${mode}.json`),
    `${JSON.stringify({ mode, connections, rounds, tiles: tiles.length, service: summary(s), raw: summary(r), throughput, filtered: Object.fromEntries(Object.entries(filtered).map(([k, f]) => [k, summary(f)])) }, null, 2)}\n`,
  );
}

await main();
