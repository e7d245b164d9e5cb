import { Logger } from '@nestjs/common';
import type { DatabaseNotifications } from '../database/notifications.js';
import type { ChangeRow } from '../database/change-log.js';
import type { Sql } from '../database/sql.js';
import { StreamedTwins, type Unwatch } from './streamed-twins.js';

/** One committed change of a timeline, as the event stream delivers it: an event's, or the twin's move. */
export interface EventChange {
  /** Its position in the change log: the stream's message id, in commit order within the twin. */
  position: string;
  /**
   * An event created, updated or deleted; `twin.moved`: the twin itself moved (its newest position);
   * `geofence.entered`/`geofence.exited`: a position crossed a geofence (the crossing's event, created).
   */
  op: 'created' | 'updated' | 'deleted' | 'twin.moved' | 'geofence.entered' | 'geofence.exited';
  twinId: string;
  /** The event's id; the twin's for `twin.moved`. */
  id: string;
  /** The event's name and category after the change (before it, for a deletion): what stream filters compare. */
  name: string;
  category: string;
  /** The resource's JSON text as committed (a deletion: its identifier); absent when too big for a notification. */
  data?: string;
}

/** The change of a change-log row that timeline streams carry (kinds `event.*`, `twin.moved` and `geofence.*`); undefined for other kinds. */
export function eventChangeOf(row: Pick<ChangeRow, 'position' | 'kind' | 'twin_id' | 'subject_id' | 'name' | 'category'> & { resource?: string }): EventChange | undefined {
  const op = row.kind === 'twin.moved' || row.kind === 'geofence.entered' || row.kind === 'geofence.exited' ? row.kind : row.kind.startsWith('event.') ? row.kind.slice('event.'.length) : undefined;
  if ((op !== 'created' && op !== 'updated' && op !== 'deleted' && op !== 'twin.moved' && op !== 'geofence.entered' && op !== 'geofence.exited') || !row.twin_id) return undefined;
  return { position: row.position, op, twinId: row.twin_id, id: row.subject_id, name: row.name ?? '', category: row.category ?? '', data: row.resource };
}

export type ChangeHandler = (change: EventChange) => void;

/** Told when changes may have gone unannounced: every stream must end (its client resumes from the log). */
export type MissedHandler = () => void;

/**
 * Carries committed timeline changes to the open event streams.
 *
 * - `PostgresEventBus`: the write statements themselves call `pg_notify(channel, …)` for the twins
 *   someone streams (so a change is announced exactly when its transaction commits, by whichever
 *   instance wrote it) and one dedicated `LISTEN` connection per instance receives them: streams on
 *   every instance see every change of their twin. Which twins are streamed is kept in the database
 *   (StreamedTwins): a notifying transaction holds PostgreSQL's notification-queue lock through its
 *   commit, so announcing every change would make every write of the database commit one at a time.
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
  abstract listen(handler: ChangeHandler, missed?: MissedHandler): Promise<void>;
  /** Resolves when every later change of the twin will be announced, until the returned function is called. */
  abstract watch(twinId: string): Promise<Unwatch>;
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

  /** Every change is handed over after commit: nothing to register. */
  async watch(): Promise<Unwatch> {
    return () => undefined;
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
  private missed: MissedHandler | undefined;
  private closed = false;
  private readonly streamed: StreamedTwins;

  constructor(
    private readonly notifications: DatabaseNotifications,
    sql: Sql,
    private readonly logger = new Logger('EventBus'),
  ) {
    super();
    this.streamed = new StreamedTwins(sql, () => this.missed?.());
    // Notifications sent while the listening connection was down are lost: the streams must resume from the log.
    notifications.onConnection((listening) => {
      if (!listening) this.missed?.();
    });
  }

  committed(): void {
    // PostgreSQL delivers the NOTIFY of the committed statement.
  }

  listen(handler: ChangeHandler, missed?: MissedHandler): Promise<void> {
    if (this.closed) return Promise.reject(new Error('The event bus is closed.'));
    this.handler ??= handler;
    this.missed ??= missed;
    this.subscribed ??= this.notifications.subscribe(EVENTS_CHANNEL, this.deliver);
    // A first connection that failed is retried by the listener; the next caller waits for it.
    return this.subscribed.catch((error: Error) => {
      this.subscribed = undefined;
      throw error;
    });
  }

  watch(twinId: string): Promise<Unwatch> {
    if (this.closed) return Promise.reject(new Error('The event bus is closed.'));
    return this.streamed.watch(twinId);
  }

  private readonly deliver = (payload: string): void => {
    if (this.closed || !this.handler) return;
    const change = parseNotification(payload);
    if (change) this.handler(change);
    else this.logger.warn(`ignored a malformed notification on ${EVENTS_CHANNEL}`);
  };

  async close(): Promise<void> {
    this.closed = true;
    await this.streamed.close();
  }
}

function parseNotification(payload: string): EventChange | undefined {
  try {
    const row = JSON.parse(payload) as ChangeRow;
    if (typeof row.position !== 'string' || typeof row.kind !== 'string' || typeof row.subject_id !== 'string') return undefined;
    return eventChangeOf(row);
  } catch {
    return undefined;
  }
}
