import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { TwinTenant } from '../common/auth/tenant.js';
import type { ResourceObject } from '../common/json-api/resource.js';
import { eventIdentifier, eventResource } from './event.resource.js';
import { EventBus, type EventChange } from './event-bus.js';
import { EventsRepository } from './events.repository.js';

/** Replayed rows read per query when a client resumes with `Last-Event-ID`. */
const REPLAY_BATCH = 500;
/** A client that stops reading is dropped once this much is queued for it (it can resume). */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** Reconnection delay suggested to EventSource clients. */
const RETRY_MS = 2000;

/** One open `text/event-stream` response. */
class EventStream {
  /** Live changes held back while the replay is written; null once live. */
  private pending: EventChange[] | null;
  private readonly replayed = new Set<string>();
  private heartbeat: NodeJS.Timeout | undefined;
  closed = false;

  constructor(
    readonly tenant: TwinTenant,
    private readonly reply: FastifyReply,
    resuming: boolean,
    private readonly onClose: (stream: EventStream) => void,
  ) {
    this.pending = resuming ? [] : null;
  }

  open(heartbeatMs: number): void {
    const raw = this.reply.raw;
    raw.writeHead(200, {
      ...headersOf(this.reply),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-store, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
    });
    raw.on('close', () => this.close());
    this.write(`retry: ${RETRY_MS}\n: connected to the timeline of twin ${this.tenant.twin.id}\n\n`);
    this.heartbeat = setInterval(() => this.write(`: heartbeat ${new Date().toISOString()}\n\n`), heartbeatMs);
    this.heartbeat.unref();
  }

  /** Writes one stored event of the replay. */
  replay(resource: ResourceObject): void {
    this.replayed.add(resource.id);
    this.send('created', resource.id, resource);
  }

  /** Ends the replay: changes that arrived meanwhile follow, minus creations the replay already sent. */
  goLive(): void {
    const pending = this.pending ?? [];
    this.pending = null;
    for (const change of pending) {
      if (change.op === 'created' && this.replayed.has(change.id)) continue;
      this.deliver(change);
    }
    this.replayed.clear();
  }

  deliver(change: EventChange): void {
    if (this.closed) return;
    if (this.pending) {
      this.pending.push(change);
      return;
    }
    if (change.op === 'deleted') this.send('deleted', change.id, eventIdentifier(change.id));
    else if (change.resource) this.send(change.op, change.id, change.resource);
  }

  private send(event: string, id: string, data: unknown): void {
    this.write(`event: ${event}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  private write(chunk: string): void {
    if (this.closed) return;
    const raw = this.reply.raw;
    if (raw.writableLength > MAX_BUFFERED_BYTES) {
      this.close();
      return;
    }
    raw.write(chunk);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.onClose(this);
    const raw = this.reply.raw;
    if (!raw.writableEnded) raw.end();
  }
}

/** Headers other hooks already set on the reply (request id, CORS), kept on the hijacked response. */
function headersOf(reply: FastifyReply): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value : String(value);
  }
  return out;
}

/**
 * The open event streams of this instance, by twin, fed by the event bus. Changes are handled one at
 * a time in arrival order (= commit order), so a stream never sees an update before its creation.
 */
@Injectable()
export class EventStreams implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('EventStreams');
  private readonly byTwin = new Map<string, Set<EventStream>>();
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly bus: EventBus,
    private readonly events: EventsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Number of open streams (for tests and diagnostics). */
  get size(): number {
    let count = 0;
    for (const streams of this.byTwin.values()) count += streams.size;
    return count;
  }

  /**
   * Opens a stream on the hijacked reply. Starts listening first, so that nothing committed after the
   * replay's query can be missed; failures before that answer as ordinary JSON:API errors.
   */
  async open(tenant: TwinTenant, lastEventId: string | undefined, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    await this.bus.listen((change) => this.enqueue(change));
    reply.hijack();
    const stream = new EventStream(tenant, reply, lastEventId !== undefined, (closed) => this.remove(closed));
    stream.open(this.config.eventStreamHeartbeatMs);
    if (stream.closed || request.raw.destroyed) {
      stream.close();
      return;
    }
    this.add(stream);
    if (lastEventId === undefined) return;
    try {
      let after = lastEventId;
      for (;;) {
        const rows = await this.events.createdAfter(tenant, after, REPLAY_BATCH);
        for (const row of rows) stream.replay(eventResource(row));
        if (rows.length < REPLAY_BATCH || stream.closed) break;
        after = rows[rows.length - 1].id;
      }
      stream.goLive();
    } catch (error) {
      this.logger.warn(`replay for twin ${tenant.twin.id} failed: ${(error as Error).message}`);
      stream.close();
    }
  }

  private add(stream: EventStream): void {
    const twinId = stream.tenant.twin.id;
    let streams = this.byTwin.get(twinId);
    if (!streams) this.byTwin.set(twinId, (streams = new Set()));
    streams.add(stream);
  }

  private remove(stream: EventStream): void {
    const streams = this.byTwin.get(stream.tenant.twin.id);
    if (!streams) return;
    streams.delete(stream);
    if (streams.size === 0) this.byTwin.delete(stream.tenant.twin.id);
  }

  private enqueue(change: EventChange): void {
    if (!this.byTwin.has(change.twinId)) return;
    this.queue = this.queue.then(() => this.dispatch(change)).catch((error: Error) => this.logger.warn(`delivering ${change.op} ${change.id} failed: ${error.message}`));
  }

  private async dispatch(change: EventChange): Promise<void> {
    const streams = this.byTwin.get(change.twinId);
    if (!streams || streams.size === 0) return;
    if (change.op !== 'deleted' && !change.resource) {
      // Announced by id only (too big for a notification): read it as one of its stream's tenants.
      const [first] = streams;
      const row = await this.events.find(first.tenant, change.id);
      if (!row) return; // deleted since; its deletion follows
      change = { ...change, resource: eventResource(row) };
    }
    for (const stream of [...streams]) stream.deliver(change);
  }

  beforeApplicationShutdown(): void {
    for (const streams of [...this.byTwin.values()]) for (const stream of [...streams]) stream.close();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.bus.close();
  }
}
