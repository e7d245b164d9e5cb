// `node bench/webhooks.mjs [--count 5000] [--no-build]`: webhook deliveries per second from the built
// service (dist/) to a local receiver. A fresh PostgreSQL database (PGURL_BASE, default
// postgresql://postgres@127.0.0.1:5432; database webhooks_bench, dropped first), the service on it with
// WEBHOOKS_ALLOW_PRIVATE=true, one tenant and one webhook to a node:http receiver that answers 204 and
// verifies every signature. `--count` changes are committed in one statement (the outbox trigger queues
// one delivery each); the figure is deliveries received per second, from the commit to the last one.
import { createServer } from 'node:http';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { option } from './lib/args.mjs';
import { startFreshService } from './lib/fresh-service.mjs';

const count = Number(option('count', 5000));
const port = Number(option('port', 3917));
const log = (message) => process.stderr.write(`${message}\n`);

const { databaseUrl, tenant, stop } = await startFreshService({ database: 'webhooks_bench', port, env: { WEBHOOKS_ALLOW_PRIVATE: 'true' } });
try {
  let received = 0;
  let bad = 0;
  let done;
  const finished = new Promise((resolve) => (done = resolve));
  let verifier;
  const receiver = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      try {
        verifier.verify(Buffer.concat(chunks).toString(), req.headers);
      } catch {
        bad += 1;
      }
      res.writeHead(204).end();
      if (++received === count) done();
    });
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const headers = { authorization: `Token ${tenant.token}`, 'x-organization': tenant.organizationId, 'content-type': 'application/vnd.api+json' };
  const created = await fetch(`http://127.0.0.1:${port}/webhooks/`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ data: { type: 'webhooks', attributes: { url: `http://127.0.0.1:${receiver.address().port}/hook`, events: ['event.created'] } } }),
  });
  if (created.status !== 201) throw new Error(`POST /webhooks/: ${created.status} ${await created.text()}`);
  verifier = new Webhook((await created.json()).data.attributes.secret);

  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const started = performance.now();
  await client.query(
    `INSERT INTO changes (organization_id, twin_id, kind, subject_id, resource)
     SELECT $1, $2, 'event.created', id, json_build_object('type', 'events', 'id', id, 'attributes', json_build_object('name', 'bench', 'n', n))::text
       FROM (SELECT gen_random_uuid() AS id, n FROM generate_series(1, $3) n) s`,
    [tenant.organizationId, tenant.twinId, count],
  );
  await finished;
  const seconds = (performance.now() - started) / 1000;
  await client.end();
  receiver.close();
  const rate = Math.round(count / seconds);
  log(`webhooks: ${count} deliveries in ${seconds.toFixed(2)} s, ${bad} bad signatures`);
  process.stdout.write(`${JSON.stringify({ deliveries: count, seconds: Number(seconds.toFixed(2)), perSecond: rate, badSignatures: bad })}\n`);
  if (bad > 0) process.exitCode = 1;
} finally {
  stop();
}
