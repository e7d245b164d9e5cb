import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PgCluster, freePort } from './support/pg-cluster';
import { bootstrapTenant, type Bootstrap, ServiceProcess, sleep } from './support/service-process';

/**
 * Webhooks survive a crash and are shared by replicas:
 * - a change committed while no worker runs, then `kill -9`: the restarted service delivers it;
 * - two instances on one database deliver each outbox row once (counted per webhook-id at the receiver).
 */
const DATABASE = 'webhooks_faults';
const ENV = { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_POLL_MS: '200', WEBHOOKS_SECRET_KEY: 'a fault-test key of at least 32 characters' };

describe('faults: webhook deliveries', () => {
  let cluster: PgCluster;
  let databaseUrl: string;
  let tenant: Bootstrap;
  const services: ServiceProcess[] = [];
  let receiver: Server;
  const received = new Map<string, number>();

  beforeAll(async () => {
    cluster = await PgCluster.create();
    await cluster.createDatabase(DATABASE);
    databaseUrl = cluster.url(DATABASE);
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const id = String(req.headers['webhook-id']);
        received.set(id, (received.get(id) ?? 0) + 1);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    for (const service of services) await service.stop(5000).catch(() => undefined);
    receiver?.close();
    await cluster?.destroy();
  });

  const start = async (env: Record<string, string> = {}) => {
    const service = await ServiceProcess.start({ port: await freePort(), databaseUrl, env: { ...ENV, ...env } });
    services.push(service);
    return service;
  };

  const commitChanges = (count: number) =>
    cluster.withClient(DATABASE, (client) =>
      client.query(
        `INSERT INTO changes (organization_id, twin_id, kind, subject_id, resource)
         SELECT $1, $2, 'event.created', id, json_build_object('type', 'events', 'id', id)::text FROM (SELECT gen_random_uuid() AS id FROM generate_series(1, $3)) s`,
        [tenant.organizationId, tenant.twinId, count],
      ),
    );

  const until = async (what: string, done: () => boolean, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(50);
    }
  };

  it('delivers after kill -9 and a restart what was committed before', async () => {
    const first = await start({ WEBHOOKS_WORKER: 'false' });
    tenant = await bootstrapTenant(databaseUrl, 'Webhooks');
    const created = await fetch(`http://127.0.0.1:${first.port}/webhooks/`, {
      method: 'POST',
      headers: { authorization: `Token ${tenant.token}`, 'x-organization': tenant.organizationId, 'content-type': 'application/vnd.api+json' },
      body: JSON.stringify({ data: { type: 'webhooks', attributes: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['event.created'] } } }),
    });
    expect(created.status).toBe(201);
    await commitChanges(5);
    await first.kill('SIGKILL');
    await first.exited;
    expect(received.size).toBe(0);

    await start();
    await until('five deliveries after the restart', () => received.size === 5);
    expect([...received.values()]).toEqual([1, 1, 1, 1, 1]);
  });

  it('two instances on one database deliver each row once', async () => {
    await start();
    received.clear();
    await commitChanges(400);
    await until('400 deliveries', () => received.size === 400);
    await sleep(1000);
    const duplicates = [...received.values()].filter((times) => times > 1).length;
    process.stdout.write(`webhooks faults: 400 rows, ${received.size} webhook-ids received, ${duplicates} more than once, by ${services.filter((s) => !s.hasExited).length} instances\n`);
    expect(received.size).toBe(400);
    expect(duplicates).toBe(0);
  });
});
