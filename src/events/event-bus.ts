import { Logger } from '@nestjs/common';
import { Client } from 'pg';
import type { ResourceObject } from '../common/json-api/resource.js';

/** One committed change of a timeline, as the event stream delivers it. */
export interface EventChange {
  op: 'created' | 'updated' | 'deleted';
  twinId: string;
  id: string;
  /** The event as it was committed (created/updated); absent when too big for a notification. */
  resource?: ResourceObject;
}

export type ChangeHandler = (change: EventChange) => void;

/**
 * Carries committed timeline changes to the open event streams.
 *
 * - `PostgresEventBus`: the write statements themselves call `pg_notify(channel, …)` (so a change is
 *   announced exactly when its transaction commits, by whichever instance wrote it) and one dedicated
 *   `LISTEN` connection per instance receives them: streams on every instance see every change.
 * - `MemoryEventBus`: in-process delivery after commit. Used with the embedded database, which is a
 *   single PostgreSQL session behind a socket that interleaves the protocol messages of concurrent
 *   connections: a second, listening connection is not safe there, and that setup is one process anyway.
 */
export abstract class EventBus {
  /** NOTIFY channel the write statements announce on, or null when the bus delivers after commit itself. */
  abstract readonly channel: string | null;
  /** Called by the writer after its transaction committed. */
  abstract committed(change: EventChange): void;
  /** Starts delivering changes to `handler` (once); resolves when every later commit will be delivered. */
  abstract listen(handler: ChangeHandler): Promise<void>;
  abstract close(): Promise<void>;
}

export const EVENTS_CHANNEL = 'twin_events';

export class MemoryEventBus extends EventBus {
  readonly channel = null;
  private handler: ChangeHandler | undefined;

  committed(change: EventChange): void {
    const handler = this.handler;
    if (handler) setImmediate(() => handler(change));
  }

  async listen(handler: ChangeHandler): Promise<void> {
    this.handler ??= handler;
  }

  async close(): Promise<void> {
    this.handler = undefined;
  }
}

/**
 * LISTEN on a plain `pg.Client` (not a pooled connection: it is held for the life of the instance).
 * Connected on the first stream, kept afterwards, reconnected with backoff when the connection drops
 * (changes committed while it is down are not delivered live; clients resume with `Last-Event-ID`).
 */
export class PostgresEventBus extends EventBus {
  readonly channel = EVENTS_CHANNEL;
  private client: Client | undefined;
  private connecting: Promise<void> | undefined;
  private handler: ChangeHandler | undefined;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelayMs = 500;

  constructor(
    private readonly url: string,
    private readonly logger = new Logger('EventBus'),
  ) {
    super();
  }

  committed(): void {
    // PostgreSQL delivers the NOTIFY of the committed statement.
  }

  listen(handler: ChangeHandler): Promise<void> {
    this.handler ??= handler;
    if (this.closed) return Promise.reject(new Error('The event bus is closed.'));
    if (this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.url, application_name: 'twin-service-events', connectionTimeoutMillis: 2000 });
    client.on('notification', (message) => {
      if (message.channel !== EVENTS_CHANNEL || !message.payload) return;
      const change = parseNotification(message.payload);
      if (change) this.handler?.(change);
      else this.logger.warn(`ignored a malformed notification on ${EVENTS_CHANNEL}`);
    });
    client.on('error', (error) => {
      this.logger.warn(`listening connection failed: ${error.message}`);
      this.dropped(client);
    });
    client.on('end', () => this.dropped(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.retryDelayMs = 500;
  }

  private dropped(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    void client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.closed || this.client || !this.handler) return;
      this.listen(this.handler).catch((error: Error) => {
        this.logger.warn(`reconnecting the listening connection failed: ${error.message}`);
        this.retryDelayMs = Math.min(this.retryDelayMs * 2, 30_000);
        this.scheduleReconnect();
      });
    }, this.retryDelayMs);
    this.retryTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    }
  }
}

function parseNotification(payload: string): EventChange | undefined {
  try {
    const parsed = JSON.parse(payload) as { op?: unknown; twin?: unknown; id?: unknown; resource?: ResourceObject };
    if ((parsed.op !== 'created' && parsed.op !== 'updated' && parsed.op !== 'deleted') || typeof parsed.twin !== 'string' || typeof parsed.id !== 'string') {
      return undefined;
    }
    return { op: parsed.op, twinId: parsed.twin, id: parsed.id, resource: parsed.resource };
  } catch {
    return undefined;
  }
}
