import { Agent, request } from 'node:http';
import { now } from './clock';
import type { Bootstrap } from './service-process';

export const JSON_API = 'application/vnd.api+json';

/** One kind of request in the mix. `body` is called per request (so each event is distinct). */
export interface RequestKind {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: (sequence: number) => string;
  /** Whether a 2xx needs the database (for recovery time). */
  usesDatabase: boolean;
}

/** What happened to one request. `status` 0 means no response (see `error`). */
export interface Sample {
  kind: string;
  start: number;
  end: number;
  status: number;
  /** Node error code when there was no response: ECONNREFUSED, ECONNRESET, CLIENT_TIMEOUT… */
  error?: string;
  /** For statuses ≥ 400 (except /health): the body is a JSON:API errors document with matching status. */
  errorsDocument?: boolean;
  errorCode?: string;
  /** /health: database.status of the body. */
  databaseStatus?: string;
  /** POST /events/ 201: the id of the stored event. */
  eventId?: string;
  /** The request went out on a kept-alive connection that had served an earlier request. */
  reusedSocket: boolean;
}

export interface LoadOptions {
  port: number;
  concurrency: number;
  mix: { kind: RequestKind; weight: number }[];
  /** Requests per second across all workers; unset = as fast as the workers go (closed loop). */
  rate?: number;
  /** A request with no response after this long counts as hung (CLIENT_TIMEOUT). */
  timeoutMs: number;
  /** Keep every sample (scenarios that slice by time); otherwise only the summary (soak). */
  keepSamples: boolean;
}

/** Bounded load on 127.0.0.1: N workers over one keep-alive agent, until stop(). */
export class LoadGenerator {
  readonly samples: Sample[] = [];
  readonly summary = new Summary();
  /** Every event id that got a 201. */
  readonly acknowledgedEvents: string[] = [];
  private readonly agent: Agent;
  private stopped = false;
  private workers: Promise<void>[] = [];
  private sequence = 0;
  private nextAt = 0;
  private readonly totalWeight: number;

  constructor(private readonly options: LoadOptions) {
    this.agent = new Agent({ keepAlive: true, maxSockets: options.concurrency, maxFreeSockets: options.concurrency });
    this.totalWeight = options.mix.reduce((sum, entry) => sum + entry.weight, 0);
  }

  start(): this {
    this.nextAt = now();
    for (let i = 0; i < this.options.concurrency; i++) this.workers.push(this.work());
    return this;
  }

  /** Stops issuing requests and waits for the outstanding ones. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.workers);
    this.agent.destroy();
  }

  async runFor(ms: number): Promise<void> {
    this.start();
    await new Promise((resolve) => setTimeout(resolve, ms));
    await this.stop();
  }

  private pick(): RequestKind {
    let roll = Math.random() * this.totalWeight;
    for (const entry of this.options.mix) {
      roll -= entry.weight;
      if (roll < 0) return entry.kind;
    }
    return this.options.mix[this.options.mix.length - 1].kind;
  }

  private async work(): Promise<void> {
    while (!this.stopped) {
      if (this.options.rate) {
        const at = Math.max(this.nextAt, now());
        this.nextAt = at + 1000 / this.options.rate;
        const wait = at - now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (this.stopped) break;
      }
      const sample = await this.send(this.pick());
      this.summary.add(sample);
      if (this.options.keepSamples) this.samples.push(sample);
      if (sample.eventId) this.acknowledgedEvents.push(sample.eventId);
      // A refusal returns at once: back off a little instead of spinning (a real client would honour Retry-After).
      if (sample.status === 0 || sample.status === 503) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  send(kind: RequestKind): Promise<Sample> {
    const body = kind.body?.(++this.sequence);
    const headers: Record<string, string | number> = { ...kind.headers };
    if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
    const start = now();
    return new Promise((resolve) => {
      let settled = false;
      const finish = (sample: Omit<Sample, 'kind' | 'start' | 'end' | 'reusedSocket'>) => {
        if (settled) return;
        settled = true;
        resolve({ kind: kind.name, start, end: now(), reusedSocket: req.reusedSocket, ...sample });
      };
      const req = request({ host: '127.0.0.1', port: this.options.port, method: kind.method, path: kind.path, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (error: NodeJS.ErrnoException) => finish({ status: 0, error: error.code ?? error.message }));
        res.on('end', () => finish(inspect(kind, res.statusCode ?? 0, String(res.headers['content-type'] ?? ''), Buffer.concat(chunks).toString())));
      });
      req.setTimeout(this.options.timeoutMs, () => {
        finish({ status: 0, error: 'CLIENT_TIMEOUT' });
        req.destroy();
      });
      req.on('error', (error: NodeJS.ErrnoException) => finish({ status: 0, error: error.code ?? error.message }));
      req.end(body);
    });
  }
}

function inspect(kind: RequestKind, status: number, contentType: string, text: string): Omit<Sample, 'kind' | 'start' | 'end' | 'reusedSocket'> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const result: Omit<Sample, 'kind' | 'start' | 'end' | 'reusedSocket'> = { status };
  if (kind.path === '/health') {
    result.databaseStatus = (body as { database?: { status?: string } } | undefined)?.database?.status;
    return result;
  }
  if (status >= 400) {
    const errors = (body as { errors?: { status?: unknown; code?: unknown; title?: unknown }[] } | undefined)?.errors;
    result.errorsDocument =
      contentType.startsWith(JSON_API) &&
      Array.isArray(errors) &&
      errors.length > 0 &&
      errors.every((e) => e.status === String(status) && typeof e.code === 'string' && typeof e.title === 'string');
    if (Array.isArray(errors) && typeof errors[0]?.code === 'string') result.errorCode = errors[0].code;
  }
  if (status === 201 && kind.method === 'POST') {
    const data = (body as { data?: { id?: unknown; type?: unknown } } | undefined)?.data;
    if (data?.type === 'events' && typeof data.id === 'string') result.eventId = data.id;
  }
  return result;
}

/** Counts by kind and status, and latencies, without keeping every sample. */
export class Summary {
  readonly byStatus = new Map<string, number>();
  readonly latencies: number[] = [];
  count = 0;
  first = Infinity;
  last = 0;

  add(sample: Sample): void {
    this.count++;
    this.first = Math.min(this.first, sample.start);
    this.last = Math.max(this.last, sample.end);
    const key = `${sample.kind} ${sample.status === 0 ? sample.error : sample.status}`;
    this.byStatus.set(key, (this.byStatus.get(key) ?? 0) + 1);
    this.latencies.push(sample.end - sample.start);
  }

  count5xx(): number {
    return [...this.byStatus].filter(([key]) => /\s5\d\d$/.test(key)).reduce((sum, [, n]) => sum + n, 0);
  }

  countNoResponse(): number {
    return [...this.byStatus].filter(([key]) => !/\s\d{3}$/.test(key)).reduce((sum, [, n]) => sum + n, 0);
  }

  throughput(): number {
    return this.count === 0 ? 0 : this.count / ((this.last - this.first) / 1000);
  }

  percentile(p: number): number {
    return percentile(this.latencies, p);
  }

  statuses(): Record<string, number> {
    return Object.fromEntries([...this.byStatus].sort(([a], [b]) => a.localeCompare(b)));
  }
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** The mix of the fault scenarios: organization reads, health checks and event writes. */
export function mixedRequests(tenant: Bootstrap, options: { label: string }): { orgs: RequestKind; health: RequestKind; event: RequestKind } {
  const auth = { authorization: `Token ${tenant.token}`, 'x-organization': tenant.organizationId, accept: JSON_API };
  return {
    orgs: { name: 'GET /organizations/', method: 'GET', path: '/organizations/', headers: auth, usesDatabase: true },
    health: { name: 'GET /health', method: 'GET', path: '/health', headers: {}, usesDatabase: true },
    event: {
      name: 'POST /events/',
      method: 'POST',
      path: '/events/',
      headers: { ...auth, 'x-twin': tenant.twinId, 'content-type': JSON_API },
      usesDatabase: true,
      body: (sequence) =>
        JSON.stringify({
          data: { type: 'events', attributes: { name: `${options.label} ${sequence}`, category: 'faults', data: { sequence, scenario: options.label } } },
        }),
    },
  };
}
