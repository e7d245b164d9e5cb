import { createServer, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { appendFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { PgCluster, freePort } from '../faults/support/pg-cluster';
import { RedisServer } from '../faults/support/redis-server';
import { bootstrapTenant, type Bootstrap, type ExitInfo, ServiceProcess, sleep } from '../faults/support/service-process';
import { call, errorKind, JSON_API, retryable, retryDelay, StreamFollower, type Answer } from './support/client';
import { NginxProcess } from '../faults/support/nginx';
import { siteConfig } from './support/proxy';
import { ReadReplicas } from '../../src/database/read-replicas';
import { Client as PgClient } from 'pg';

/**
 * Three replicas of the built service behind the repository's nginx configuration, one PostgreSQL
 * database, one Redis, under steady load: a rolling restart (SIGTERM, wait for the exit, start, wait
 * for ready, next) and then a `kill -9` of one replica. Checked at the end: no acknowledged write lost,
 * none doubled by retries, clients saw only retryable errors, an event stream on one replica saw the
 * writes made through the others and a resumed stream missed nothing, webhooks delivered each change
 * (exactly once outside the kill -9 window). docs/RELIABILITY.md, "Cluster".
 */
const DATABASE = `cluster_${process.pid}`;
const WRITE_RATE = Number(process.env.CLUSTER_WRITE_RATE ?? 60);
const READ_RATE = Number(process.env.CLUSTER_READ_RATE ?? 20);
const WRITERS = Number(process.env.CLUSTER_WRITERS ?? 8);
const READERS = 2;
const STEADY_MS = Number(process.env.CLUSTER_STEADY_MS ?? 3000);
const WEBHOOK_TIMEOUT_MS = 3000;
const FIGURES_FILE = process.env.CLUSTER_FIGURES ?? '/tmp/twin-cluster-figures.jsonl';

const now = () => performance.now();

describe('cluster: three replicas behind nginx', () => {
  let cluster: PgCluster;
  let replica: PgCluster;
  let redis: RedisServer;
  let proxy: NginxProcess;
  let receiver: Server;
  let databaseUrl: string;
  const replicas: ServiceProcess[] = [];
  let ports: number[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    cluster = await PgCluster.create();
    await cluster.createDatabase(DATABASE);
    databaseUrl = cluster.url(DATABASE);
    // Made after the database exists, so the standby has it; the schema arrives by replication.
    replica = await PgCluster.standbyOf(cluster);
    redis = await RedisServer.start();
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        webhooks.receive(String(req.headers['webhook-id']), Buffer.concat(chunks).toString('utf8'));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    env = {
      REDIS_URL: redis.url,
      DATABASE_REPLICA_URLS: replica.url(DATABASE),
      // The shared (Redis) limiter is on but far above the load: a 429 would be a finding.
      RATE_LIMIT_MAX: '1000000',
      DATABASE_POOL_SIZE: '8',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOKS_POLL_MS: '200',
      WEBHOOKS_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
      WEBHOOKS_SECRET_KEY: 'a cluster-test key of at least 32 characters',
    };
    ports = [await freePort(), 0, 0];
    ports[1] = await freePort(ports[0] + 1);
    ports[2] = await freePort(ports[1] + 1);
    // All three at the same moment on a new database: the migration lock decides who migrates.
    replicas.push(...(await Promise.all(ports.map((port) => ServiceProcess.start({ port, databaseUrl, env })))));
    await Promise.all(ports.map((port) => untilReady(port)));
    // The repository's recommended site file (deploy/nginx/twin-service.conf), as it is.
    proxy = await NginxProcess.start(ports, siteConfig);
  }, 180_000);

  afterAll(async () => {
    for (const replica of replicas) await replica.stop(5000).catch(() => undefined);
    await proxy?.stop();
    receiver?.close();
    await redis?.stop();
    await replica?.destroy();
    await cluster?.destroy();
  });

  const webhooks = new (class {
    /** webhook-id → receipt times (ms, the test's clock). */
    readonly receipts = new Map<string, number[]>();
    /** event id → webhook-ids that carried its event.created. */
    readonly byEvent = new Map<string, Set<string>>();
    receive(webhookId: string, body: string) {
      const times = this.receipts.get(webhookId) ?? [];
      times.push(now());
      this.receipts.set(webhookId, times);
      try {
        const payload = JSON.parse(body) as { type: string; data: { id: string } };
        if (payload.type !== 'event.created') return;
        const ids = this.byEvent.get(payload.data.id) ?? new Set<string>();
        ids.add(webhookId);
        this.byEvent.set(payload.data.id, ids);
      } catch {
        // counted by webhook-id; a body that is no JSON cannot match an event and shows as missing
      }
    }
  })();

  it('loses no acknowledged write through a rolling restart and a kill -9, and shows clients only retryable errors', async () => {
    const tenant: Bootstrap = await bootstrapTenant(databaseUrl, 'Cluster');
    const auth = { authorization: `Token ${tenant.token}`, 'x-organization': tenant.organizationId, accept: JSON_API };
    const asTwin = { ...auth, 'x-twin': tenant.twinId };

    const hook = await call(proxy.port, 'POST', '/webhooks/', {
      headers: { ...auth, 'content-type': JSON_API },
      body: JSON.stringify({ data: { type: 'webhooks', attributes: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['event.created'] } } }),
    });
    expect(hook.status).toBe(201);

    // --- the figures
    const acknowledged = new Map<string, string>(); // Idempotency-Key → event id
    const errors = new Map<string, number>();
    const notRetryable: string[] = [];
    const gaveUp: string[] = [];
    let requests = 0;
    let reads = 0;
    let replays = 0;
    const count = (answer: Answer) => errors.set(errorKind(answer), (errors.get(errorKind(answer)) ?? 0) + 1);

    /** POST /events/ with a key until a 201, retrying what is retryable with the same key and body. */
    const write = async (port: number, label: string, agent?: Agent): Promise<string | undefined> => {
      const key = `cluster-${randomUUID()}`;
      const body = JSON.stringify({ data: { type: 'events', attributes: { name: label, category: 'cluster', data: { key } } } });
      for (let attempt = 1; attempt <= 60; attempt++) {
        const answer = await call(port, 'POST', '/events/', { headers: { ...asTwin, 'content-type': JSON_API, 'idempotency-key': key }, body, agent });
        requests++;
        if (answer.status === 201) {
          const id = (JSON.parse(answer.body) as { data: { id: string } }).data.id;
          if (answer.headers['idempotent-replayed'] === 'true') replays++;
          acknowledged.set(key, id);
          return id;
        }
        count(answer);
        if (!retryable(answer)) {
          notRetryable.push(`POST ${errorKind(answer)}: ${answer.body.slice(0, 300)}`);
          return undefined;
        }
        await sleep(retryDelay(answer));
      }
      gaveUp.push(key);
      return undefined;
    };

    // --- an event stream directly on replica A; resumed through nginx once A goes away
    const stream = new StreamFollower(asTwin, ports[0], proxy.port).start();
    await Promise.race([stream.opened, sleep(10_000).then(() => Promise.reject(new Error(`stream did not open: ${JSON.stringify(stream.connections)}`)))]);
    const crossReplica: { via: string; ms: number }[] = [];
    for (const [index, via] of [[1, 'B'], [2, 'C']] as const) {
      const started = now();
      const id = await write(ports[index], `written through ${via}`);
      expect(id).toBeDefined();
      await until(`the stream on replica A to show the event written through replica ${via}`, () => stream.has(id!), 10_000);
      crossReplica.push({ via, ms: Math.round(now() - started) });
    }

    // --- steady load through nginx
    let stopping = false;
    const paced = (rate: number) => {
      let next = now();
      return async () => {
        const at = Math.max(next, now());
        next = at + 1000 / rate;
        if (at > now()) await sleep(at - now());
      };
    };
    const writeSlot = paced(WRITE_RATE);
    const readSlot = paced(READ_RATE);
    const agent = new Agent({ keepAlive: true, maxSockets: WRITERS + READERS });
    const writers = Array.from({ length: WRITERS }, async (_, worker) => {
      for (let n = 0; !stopping; n++) {
        await writeSlot();
        if (!stopping) await write(proxy.port, `writer ${worker} #${n}`, agent);
      }
    });
    const readers = Array.from({ length: READERS }, async (_, reader) => {
      while (!stopping) {
        await readSlot();
        const ids = [...acknowledged.values()];
        // An acknowledged event must be readable at once through any replica; the timeline too.
        const path = reader === 0 && ids.length > 0 ? `/events/${ids[Math.floor(Math.random() * ids.length)]}` : '/events/?page_size=5';
        const answer = await call(proxy.port, 'GET', path, { headers: asTwin, agent });
        requests++;
        reads++;
        if (answer.status === 200) continue;
        count(answer);
        if (!retryable(answer)) notRetryable.push(`GET ${path} ${errorKind(answer)}: ${answer.body.slice(0, 300)}`);
      }
    });

    const phases: string[] = [];
    const exits: { replica: number; signal: string; exit: ExitInfo; downMs: number }[] = [];
    const restart = async (index: number, signal: 'SIGTERM' | 'SIGKILL') => {
      const started = now();
      await replicas[index].kill(signal);
      const exit = await replicas[index].exited;
      const at = now();
      replicas[index] = await ServiceProcess.start({ port: ports[index], databaseUrl, env });
      await untilReady(ports[index]);
      exits.push({ replica: index, signal, exit, downMs: Math.round(now() - started) });
      phases.push(`${signal} replica ${'ABC'[index]}: exited in ${Math.round(at - started)} ms (${exit.code ?? exit.signal}), ready again after ${Math.round(now() - started)} ms`);
      return { at: started };
    };

    const loadStarted = now();
    await sleep(STEADY_MS);
    for (const index of [0, 1, 2]) {
      await restart(index, 'SIGTERM');
      // Let nginx's fail_timeout put the replica back in rotation before the next one goes.
      await sleep(STEADY_MS);
    }
    const kill = await restart(1, 'SIGKILL');
    await sleep(STEADY_MS);
    stopping = true;
    await Promise.all([...writers, ...readers]);
    agent.destroy();
    const loadMs = now() - loadStarted;

    // --- every acknowledged write stored, nothing doubled
    const ackIds = [...acknowledged.values()];
    const stored = await cluster.withClient(DATABASE, async (client) => {
      const rows = await client.query<{ id: string; key: string }>(`SELECT id, data->>'key' AS key FROM events WHERE twin_id = $1`, [tenant.twinId]);
      return rows.rows;
    });
    const storedIds = new Set(stored.map((row) => row.id));
    const lost = ackIds.filter((id) => !storedIds.has(id));
    const storedKeys = new Map<string, number>();
    for (const row of stored) storedKeys.set(row.key, (storedKeys.get(row.key) ?? 0) + 1);
    const doubled = [...storedKeys.values()].filter((times) => times > 1).length;
    const unacknowledgedStored = stored.filter((row) => !acknowledged.has(row.key)).length;

    // --- the streaming replica: once it has replayed the primary's WAL up to now, a read routed to it
    // (the service's own ReadReplicas) answers every acknowledged event
    const walAt = now();
    const primaryLsn = await cluster.withClient(DATABASE, async (client) => (await client.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn);
    const replicaUrl = replica.url(DATABASE);
    const replayed = async () => {
      const client = new PgClient({ connectionString: replicaUrl });
      await client.connect();
      try {
        return (await client.query<{ caught: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS caught', [primaryLsn])).rows[0].caught;
      } finally {
        await client.end();
      }
    };
    let caughtUp = false;
    while (!caughtUp && now() - walAt < 30_000) if (!(caughtUp = await replayed())) await sleep(50);
    const replicationMs = Math.round(now() - walAt);
    const replicaReads = ReadReplicas.open([replicaUrl], { poolSize: 1, statementTimeoutMs: 5000, readTimeoutMs: 6000, preparedStatements: true })!;
    let answeredBy = 'replica';
    const onReplica = (await replicaReads.query(
      'SELECT pg_is_in_recovery() AS standby, count(*)::int AS n FROM events WHERE id = ANY($1::uuid[])',
      [[...acknowledged.values()]],
      async () => ((answeredBy = 'primary'), []),
    )) as { standby: boolean; n: number }[];
    await replicaReads.close();
    const onReplicaCount = answeredBy === 'replica' ? onReplica[0].n : -1;
    const standby = onReplica[0]?.standby === true;

    // --- the stream: every stored event once, positions increasing, nothing after a reset
    await until('the resumed stream to show every stored event', () => stored.every((row) => stream.has(row.id)), 30_000).catch(() => undefined);
    await stream.stop();
    const created = stream.messages.filter((message) => message.event === 'created');
    const seen = new Map<string, number>();
    for (const message of created) seen.set(message.id!, (seen.get(message.id!) ?? 0) + 1);
    const streamGap = stored.filter((row) => !seen.has(row.id)).length;
    const streamTwice = [...seen.values()].filter((times) => times > 1).length;
    const positions = stream.messages.map((message) => message.position);
    const outOfOrder = positions.filter((position, i) => i > 0 && position <= positions[i - 1]).length;
    const resets = stream.messages.filter((message) => message.event === 'reset').length;
    const resumed = stream.connections.slice(1).filter((connection) => connection.status === 200).length;

    // --- webhooks: every acknowledged event.created delivered; duplicates only around the kill -9
    await until('a webhook delivery for every acknowledged event', () => ackIds.every((id) => webhooks.byEvent.has(id)), 60_000).catch(() => undefined);
    await sleep(1000);
    const undelivered = ackIds.filter((id) => !webhooks.byEvent.has(id)).length;
    let duplicatesAtKill = 0;
    let duplicatesElsewhere = 0;
    let deliveries = 0;
    for (const times of webhooks.receipts.values()) {
      deliveries += times.length;
      if (times.length < 2) continue;
      // At least once: an attempt in flight when its replica was killed is sent again after its lease.
      if (times[0] >= kill.at - WEBHOOK_TIMEOUT_MS - 1000 && times[0] <= kill.at + 1000) duplicatesAtKill++;
      else duplicatesElsewhere++;
    }
    const eventsWithTwoWebhookIds = [...webhooks.byEvent.values()].filter((ids) => ids.size > 1).length;

    const sigtermExits = exits.filter((exit) => exit.signal === 'SIGTERM').map((exit) => exit.exit.code);
    const nginxErrors = proxy.accessLog().filter((line) => line.status >= 500).length;
    const figures = {
      scenario: 'cluster',
      replicas: 3,
      loadSeconds: Math.round(loadMs / 100) / 10,
      requests,
      reads,
      writesAcknowledged: acknowledged.size,
      idempotentReplays: replays,
      errorsByKind: Object.fromEntries([...errors.entries()].sort()),
      notRetryable: notRetryable.length,
      gaveUp: gaveUp.length,
      lost: lost.length,
      doubled,
      storedNotAcknowledged: unacknowledgedStored,
      crossReplicaStream: crossReplica,
      streamConnections: stream.connections.length,
      streamResumed: resumed,
      streamGap,
      streamTwice,
      streamOutOfOrder: outOfOrder,
      streamResets: resets,
      webhookIds: webhooks.receipts.size,
      webhookDeliveries: deliveries,
      webhookUndelivered: undelivered,
      webhookDuplicatesAtKill: duplicatesAtKill,
      webhookDuplicatesElsewhere: duplicatesElsewhere,
      eventsWithTwoWebhookIds,
      nginx5xxLogged: nginxErrors,
      sigtermExitCodes: sigtermExits,
      replicaCaughtUpMs: replicationMs,
      replicaAcknowledgedVisible: onReplicaCount,
    };
    const rows: [string, string | number][] = [
      ['replicas / load time', `3 / ${figures.loadSeconds} s`],
      ['requests (writes + retries + reads)', requests],
      ['writes acknowledged (201)', acknowledged.size],
      ['reads', reads],
      ...[...errors.entries()].sort().map(([kind, n]): [string, number] => [`errors: ${kind}`, n]),
      ['non-retryable errors / gave up', `${notRetryable.length} / ${gaveUp.length}`],
      ['lost (acknowledged, not stored)', lost.length],
      ['doubled by retries / stored but never acknowledged', `${doubled} / ${unacknowledgedStored}`],
      ['idempotent replays (a retry answered the first 201)', replays],
      ['stream on A: writes through B, C seen after', crossReplica.map((c) => `${c.via} ${c.ms} ms`).join(', ')],
      ['stream connections (resumed with Last-Event-ID)', `${stream.connections.length} (${resumed})`],
      ['stream gap / twice / out of order / resets', `${streamGap} / ${streamTwice} / ${outOfOrder} / ${resets}`],
      ['webhook deliveries / webhook-ids', `${deliveries} / ${webhooks.receipts.size}`],
      ['webhooks undelivered', undelivered],
      ['webhook duplicates: kill -9 window / elsewhere', `${duplicatesAtKill} / ${duplicatesElsewhere}`],
      ['SIGTERM exit codes', sigtermExits.join(', ')],
      ['streaming replica: replayed the primary WAL after the load in', `${replicationMs} ms`],
      ['streaming replica: acknowledged events read there (ReadReplicas, hot standby)', `${onReplicaCount} of ${acknowledged.size} (${answeredBy}, standby ${standby})`],
    ];
    process.stdout.write(
      `\ncluster figures\n${phases.map((phase) => `  ${phase}\n`).join('')}| Figure | Value |\n|---|---|\n${rows.map(([name, value]) => `| ${name} | ${value} |`).join('\n')}\n` +
        (notRetryable.length ? `non-retryable:\n  ${notRetryable.slice(0, 10).join('\n  ')}\n` : ''),
    );
    appendFileSync(FIGURES_FILE, `${JSON.stringify({ at: new Date().toISOString(), ...figures })}\n`);

    expect(notRetryable).toEqual([]);
    expect(gaveUp).toEqual([]);
    expect(lost).toEqual([]);
    expect(doubled).toBe(0);
    expect(unacknowledgedStored).toBe(0);
    expect(errors.get('no answer: CLIENT_TIMEOUT') ?? 0).toBe(0);
    expect([...errors.keys()].filter((kind) => kind.endsWith('non-JSON:API'))).toEqual([]);
    expect(streamGap).toBe(0);
    expect(streamTwice).toBe(0);
    expect(outOfOrder).toBe(0);
    expect(resets).toBe(0);
    expect(resumed).toBeGreaterThan(0);
    expect(undelivered).toBe(0);
    expect(duplicatesElsewhere).toBe(0);
    expect(eventsWithTwoWebhookIds).toBe(0);
    expect(sigtermExits).toEqual([0, 0, 0]);
    expect(caughtUp).toBe(true);
    expect(answeredBy).toBe('replica');
    expect(standby).toBe(true);
    expect(onReplicaCount).toBe(acknowledged.size);
  }, 600_000);
});

/** Waits for GET /health/ready = 200 (migrations applied, database up). */
async function untilReady(port: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await call(port, 'GET', '/health/ready', { timeoutMs: 2000 });
    if (answer.status === 200) return;
    if (Date.now() > deadline) throw new Error(`replica on ${port} not ready within ${timeoutMs} ms: ${answer.status} ${answer.body}`);
    await sleep(100);
  }
}

async function until(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
