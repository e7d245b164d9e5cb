import { Logger } from '@nestjs/common';
import type { DatabaseNotifications } from '../database/notifications.js';
import type { ResourceObject } from '../common/json-api/resource.js';

/** One committed change of a timeline, as the event stream delivers it. */
export interface EventChange {
  op: 'created' | 'updated' | 'deleted';
  twinId: string;
  id: string;
  /** The event as it was committed (created/updated); absent when too big for a notification. */
  resource?: ResourceObject;
  /** A deletion's name and category as they were (stream filters); the other changes carry them in `resource`. */
  name?: string;
  category?: string;
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

/** Timeline changes announced by the write statements' NOTIFY, received on the instance's listening connection. */
export class PostgresEventBus extends EventBus {
  readonly channel = EVENTS_CHANNEL;
  private subscribed: Promise<void> | undefined;
  private handler: ChangeHandler | undefined;
  private closed = false;

  constructor(
    private readonly notifications: DatabaseNotifications,
    private readonly logger = new Logger('EventBus'),
  ) {
    super();
  }

  committed(): void {
    // PostgreSQL delivers the NOTIFY of the committed statement.
  }

  listen(handler: ChangeHandler): Promise<void> {
    if (this.closed) return Promise.reject(new Error('The event bus is closed.'));
    this.handler ??= handler;
    this.subscribed ??= this.notifications.subscribe(EVENTS_CHANNEL, this.deliver);
    // A first connection that failed is retried by the listener; the next caller waits for it.
    return this.subscribed.catch((error: Error) => {
      this.subscribed = undefined;
      throw error;
    });
  }

  private readonly deliver = (payload: string): void => {
    if (this.closed || !this.handler) return;
    const change = parseNotification(payload);
    if (change) this.handler(change);
    else this.logger.warn(`ignored a malformed notification on ${EVENTS_CHANNEL}`);
  };

  async close(): Promise<void> {
    this.closed = true;
  }
}

function parseNotification(payload: string): EventChange | undefined {
  try {
    const parsed = JSON.parse(payload) as { op?: unknown; twin?: unknown; id?: unknown; resource?: ResourceObject; name?: string; category?: string };
    if ((parsed.op !== 'created' && parsed.op !== 'updated' && parsed.op !== 'deleted') || typeof parsed.twin !== 'string' || typeof parsed.id !== 'string') {
      return undefined;
    }
    return { op: parsed.op, twinId: parsed.twin, id: parsed.id, resource: parsed.resource, name: parsed.name, category: parsed.category };
  } catch {
    return undefined;
  }
}
