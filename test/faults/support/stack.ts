import { Client } from 'pg';
import { PgCluster, freePort } from './pg-cluster';
import { bootstrapTenant, Bootstrap, ServiceProcess } from './service-process';
import { LoadGenerator, mixedRequests, RequestKind } from './load';

/** A throwaway cluster with a database, the service on it, and one tenant. Always `close()` it. */
export class FaultStack {
  /** Events created by eventsAvailable() probes (acknowledged outside the load generator). */
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
      await cluster.createDatabase('twins_faults');
      const databaseUrl = cluster.url('twins_faults');
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

  /**
   * Whether POST /events/ exists yet (the events module is built separately): one event is sent and
   * must come back 201. Anything else fails, unless FAULTS_ALLOW_MISSING_EVENTS=1 lets a 404 through.
   */
  async eventsAvailable(event: RequestKind): Promise<boolean> {
    const probe = new LoadGenerator({ port: this.port, concurrency: 1, mix: [{ kind: event, weight: 1 }], timeoutMs: 5000, keepSamples: true });
    const sample = await probe.send(event);
    if (sample.status === 201 && sample.eventId) {
      this.probeEvents.push(sample.eventId);
      return true;
    }
    if (sample.status === 404 && process.env.FAULTS_ALLOW_MISSING_EVENTS === '1') {
      process.stdout.write('\n!! POST /events/ answers 404: the events module is not served yet; event invariants are NOT checked\n');
      return false;
    }
    throw new Error(`POST /events/ probe: expected 201 with an events resource, got ${sample.status} ${sample.error ?? ''}`);
  }

  /** How many of these event ids are stored. */
  async storedEvents(ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const client = new Client({ connectionString: this.databaseUrl });
    await client.connect();
    try {
      const result = await client.query<{ count: string }>('SELECT count(*) AS count FROM events WHERE id = ANY($1::uuid[])', [ids]);
      return Number(result.rows[0].count);
    } finally {
      await client.end();
    }
  }

  /** All events stored for the tenant's twin (acknowledged or not). */
  async eventsOfTwin(): Promise<number> {
    const client = new Client({ connectionString: this.databaseUrl });
    await client.connect();
    try {
      const result = await client.query<{ count: string }>('SELECT count(*) AS count FROM events WHERE twin_id = $1', [this.tenant.twinId]);
      return Number(result.rows[0].count);
    } finally {
      await client.end();
    }
  }

  async close(): Promise<void> {
    try {
      await this.service.stop(5000).catch(() => undefined);
    } finally {
      await this.cluster.destroy();
    }
  }
}
