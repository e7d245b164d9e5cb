// `node bench/batches.mjs [--size 1000] [--rounds 30] [--seconds 10] [--connections 4] [--no-build]`:
// what POST /operations ingests on this machine, from the built service (dist/) on a fresh PostgreSQL
// database (PGURL_BASE, default postgresql://postgres@127.0.0.1:5432; database batches_bench, dropped
// first), one tenant with one twin per connection (each device writes its own timeline).
//
// 1. Latency: `--rounds` batches of `--size` event adds one after the other, each timed from the request
//    to the parsed answer (client side: what an app waits for). Median and p95.
// 2. Throughput: `--connections` clients for `--seconds`, each posting batches to its own twin's
//    timeline, as fast as answers come back (autocannon). Events stored per second.
// Every event is ~200 bytes of JSON (name, category, a small data object, an `occurred`).
import autocannon from 'autocannon';
import pg from 'pg';
import { option } from './lib/args.mjs';
import { startFreshService } from './lib/fresh-service.mjs';

const size = Number(option('size', 1000));
const rounds = Number(option('rounds', 30));
const seconds = Number(option('seconds', 10));
const connections = Number(option('connections', 4));
const ATOMIC = 'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"';
const log = (message) => process.stderr.write(`${message}\n`);

const { databaseUrl, tenant, url, stop } = await startFreshService({ database: 'batches_bench', port: Number(option('port', 3918)) });
const batchBody = (round) =>
  JSON.stringify({
    'atomic:operations': Array.from({ length: size }, (_, i) => ({
      op: 'add',
      data: { type: 'events', attributes: { name: 'step', category: 'activity', data: { round, i, steps: 100 + i, device: 'watch' }, occurred: '2026-11-21T17:02:41.5Z' } },
    })),
  });

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

try {
  const headers = (twin) => ({ authorization: `Token ${tenant.token}`, 'x-organization': tenant.organizationId, 'x-twin': twin, 'content-type': ATOMIC });
  const twins = [tenant.twinId];
  while (twins.length < connections) {
    const made = await fetch(url('/my/twins/'), {
      method: 'POST',
      headers: { ...headers(tenant.twinId), 'content-type': 'application/vnd.api+json' },
      body: JSON.stringify({ data: { type: 'twins', attributes: { name: `Device ${twins.length}` } } }),
    });
    if (made.status !== 201) throw new Error(`POST /my/twins/: ${made.status} ${await made.text()}`);
    twins.push((await made.json()).data.id);
  }

  // Warm-up (JIT, prepared statements, the pool), then the timed rounds.
  const timings = [];
  for (let round = -3; round < rounds; round++) {
    const body = batchBody(round);
    const started = performance.now();
    const response = await fetch(url('/operations'), { method: 'POST', headers: headers(twins[0]), body });
    const answer = await response.json();
    const ms = performance.now() - started;
    if (response.status !== 200 || answer['atomic:results'].length !== size) throw new Error(`POST /operations: ${response.status}`);
    if (round >= 0) timings.push(ms);
  }
  timings.sort((a, b) => a - b);
  const latency = { median: Number(percentile(timings, 50).toFixed(1)), p95: Number(percentile(timings, 95).toFixed(1)), max: Number(timings[timings.length - 1].toFixed(1)) };
  log(`batches: ${size} events per batch, ${rounds} in a row: median ${latency.median} ms, p95 ${latency.p95} ms, max ${latency.max} ms`);

  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const count = async () => Number((await client.query('SELECT count(*) AS n FROM events')).rows[0].n);
  const before = await count();
  const body = batchBody(0);
  const results = await Promise.all(
    twins.map((twin) =>
      autocannon({ url: url('/operations'), method: 'POST', headers: headers(twin), body, connections: 1, duration: seconds, timeout: 30 }),
    ),
  );
  const stored = (await count()) - before;
  await client.end();
  const errors = results.reduce((sum, result) => sum + result.errors + result.timeouts + result.non2xx, 0);
  const eventsPerSecond = Math.round(stored / seconds);
  log(`batches: ${connections} clients for ${seconds} s: ${stored} events stored, ${eventsPerSecond} events/s, ${errors} errors`);
  process.stdout.write(`${JSON.stringify({ size, rounds, latencyMs: latency, connections, seconds, eventsStored: stored, eventsPerSecond, errors })}\n`);
  if (errors > 0) process.exitCode = 1;
} finally {
  stop();
}
