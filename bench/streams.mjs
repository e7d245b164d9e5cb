// `node bench/streams.mjs [--streams 2000] [--no-build]`: what idle event streams cost one instance.
// The built service (dist/) on a fresh PostgreSQL database (PGURL_BASE; database streams_bench, dropped
// first), one tenant; opens `--streams` GET /events/stream connections (one twin each, as devices do),
// waits until all are open, and reads the service's resident memory (/proc/<pid>/status VmRSS) before
// and after. Then one event per twin is written and the time until every stream has its message is
// taken: the fan-out of the instance's one LISTEN connection.
import http from 'node:http';
import pg from 'pg';
import { option } from './lib/args.mjs';
import { startFreshService } from './lib/fresh-service.mjs';

const count = Number(option('streams', 2000));
const twinsCount = Math.min(count, Number(option('twins', 200)));
const port = Number(option('port', 3919));
const log = (message) => process.stderr.write(`${message}\n`);

const { databaseUrl, tenant, rssMb, stop } = await startFreshService({ database: 'streams_bench', port, env: { WEBHOOKS_WORKER: 'false' } });
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

try {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const twins = [tenant.twinId];
  const made = await client.query(`INSERT INTO twins (organization_id, name) SELECT $1, 'Device ' || n FROM generate_series(2, $2) n RETURNING id`, [tenant.organizationId, twinsCount]);
  twins.push(...made.rows.map((row) => row.id));
  const headers = (twin) => ({ authorization: `Token ${tenant.token}`, 'x-organization': tenant.organizationId, 'x-twin': twin });

  global.gc?.();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const before = rssMb();
  const received = new Array(count).fill(0);
  const requests = [];
  const open = (i) =>
    new Promise((resolve, reject) => {
      const request = http.get({ host: '127.0.0.1', port, path: '/events/stream', headers: headers(twins[i % twins.length]), agent }, (response) => {
        if (response.statusCode !== 200) return reject(new Error(`stream ${i}: ${response.statusCode}`));
        response.setEncoding('utf8');
        response.on('data', (chunk) => {
          if (chunk.includes('event: created')) received[i] += 1;
        });
        resolve();
      });
      request.on('error', reject);
      requests.push(request);
    });
  // Opened 100 at a time, as devices reconnecting over a few seconds would (a burst of thousands at once
  // queues their authentication on the pool).
  for (let i = 0; i < count; i += 100) await Promise.all(Array.from({ length: Math.min(100, count - i) }, (_, k) => open(i + k)));
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const after = rssMb();
  log(`streams: ${count} open over ${twins.length} twins: RSS ${before.toFixed(0)} → ${after.toFixed(0)} MB (${(((after - before) * 1024) / count).toFixed(1)} KiB per stream)`);

  const started = performance.now();
  // Through the API: a change reaches streams from the change row its statement writes and notifies.
  await Promise.all(
    twins.map((twin) =>
      fetch(`http://127.0.0.1:${port}/events/`, {
        method: 'POST',
        headers: { ...headers(twin), 'content-type': 'application/vnd.api+json' },
        body: JSON.stringify({ data: { type: 'events', attributes: { name: 'ping', category: 'bench', data: {} } } }),
      }).then((r) => r.arrayBuffer()),
    ),
  );
  while (received.some((n) => n === 0)) {
    if (performance.now() - started > 30_000) throw new Error(`${received.filter((n) => n === 0).length} streams got nothing in 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const fanOutMs = performance.now() - started;
  log(`streams: one event per twin (${twins.length} POSTs): every one of the ${count} streams had its message after ${fanOutMs.toFixed(0)} ms`);
  process.stdout.write(`${JSON.stringify({ streams: count, twins: twins.length, rssBeforeMb: Math.round(before), rssAfterMb: Math.round(after), kibPerStream: Number((((after - before) * 1024) / count).toFixed(1)), fanOutMs: Math.round(fanOutMs) })}\n`);
  for (const request of requests) request.destroy();
  await client.end();
} finally {
  stop();
}
