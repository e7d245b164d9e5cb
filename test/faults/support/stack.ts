import { PgCluster, freePort } from './pg-cluster';
import { bootstrapTenant, Bootstrap, ServiceProcess } from './service-process';
import { LoadGenerator, mixedRequests, RequestKind } from './load';

const DATABASE = 'twins_faults';

/** A throwaway cluster with a database, the service on it, and one tenant. Always `close()` it. */
export class FaultStack {
  /** Events created by probeEventWrite() (acknowledged outside the load generator). */
  readonly probeEvents: string[] = [];

  private constructor(
    readonly cluster: PgCluster,
    readonly databaseUrl: string,
    public service: ServiceProcess,
    readonly tenant: Bootstrap,
  ) {}

  static async start(label: string, env: Record<string, string> = {}): Promise<FaultStack> {
    const cluster = await PgCluster.create();
    let service: ServiceProcess | undefined;
    try {
      await cluster.createDatabase(DATABASE);
      const databaseUrl = cluster.url(DATABASE);
      // The service migrates at boot; the CLI then finds the schema in place.
      service = await ServiceProcess.start({ port: await freePort(), databaseUrl, env });
      const tenant = await bootstrapTenant(databaseUrl, label);
      return new FaultStack(cluster, databaseUrl, service, tenant);
    } catch (error) {
      await service?.stop().catch(() => undefined);
      await cluster.destroy();
      throw error;
    }
  }

  get port(): number {
    return this.service.port;
  }

  requests(label: string) {
    return mixedRequests(this.tenant, { label });
  }

  /** One event is sent before the load and must come back 201 (kept in `probeEvents`), or the run fails. */
  async probeEventWrite(event: RequestKind): Promise<void> {
    const probe = new LoadGenerator({ port: this.port, concurrency: 1, mix: [{ kind: event, weight: 1 }], timeoutMs: 5000, keepSamples: true });
    try {
      const sample = await probe.send(event);
      if (sample.status !== 201 || !sample.eventId) {
        throw new Error(`POST /events/ probe: expected 201 with an events resource, got ${sample.status} ${sample.error ?? ''}`);
      }
      this.probeEvents.push(sample.eventId);
    } finally {
      await probe.stop();
    }
  }

  /** How many of these event ids are stored. */
  async storedEvents(ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    return this.countEvents('id = ANY($1::uuid[])', [ids]);
  }

  /** All events stored for the tenant's twin (acknowledged or not). */
  async eventsOfTwin(): Promise<number> {
    return this.countEvents('twin_id = $1', [this.tenant.twinId]);
  }

  private countEvents(where: string, values: unknown[]): Promise<number> {
    return this.cluster.withClient(DATABASE, async (client) => {
      const result = await client.query<{ count: string }>(`SELECT count(*) AS count FROM events WHERE ${where}`, values);
      return Number(result.rows[0].count);
    });
  }

  async close(): Promise<void> {
    try {
      await this.service.stop(5000).catch(() => undefined);
    } finally {
      await this.cluster.destroy();
    }
  }
}
