import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { TwinTenant } from '../common/auth/tenant.js';
import { invalidHeader } from '../common/json-api/api-error.js';
import { isUuid } from '../common/value-checks.js';
import { EventBus, eventChangeOf, type EventChange } from './event-bus.js';
import { EventsRepository, type StreamFilter } from './events.repository.js';

/** Replayed changes read per query when a client resumes with `Last-Event-ID`. */
export const REPLAY_BATCH = 500;
/** A client that stops reading is dropped once about this much is queued for it (it can resume). */
export const MAX_QUEUED_BYTES = 4 * 1024 * 1024;
/** Reconnection delay suggested to clients. */
const RETRY_MS = 2000;

/** What a timeline stream carries, in order; how it is put on the wire is the transport's business. */
export type StreamMessage =
  /** First message of every stream. */
  | { readonly type: 'opened'; readonly twinId: string; readonly retryMs: number }
  /**
   * Second message of a stream whose `Last-Event-ID` the change log cannot continue from (pruned past
   * the retention, or never given by it): the client must reload the timeline; the stream continues
   * with the changes after `position`.
   */
  | { readonly type: 'reset'; readonly position: string }
  /** Sent on a fixed cadence whatever else is sent, so that idle connections stay open. */
  | { readonly type: 'heartbeat'; readonly at: Date }
  /**
   * A change of the timeline. `position` is its place in the change log (the SSE id a client resumes
   * from); `data` the JSON text of the event resource as committed (of its identifier for `deleted`),
   * shared by every stream of the twin.
   */
  | {
      readonly type: 'change';
      readonly op: EventChange['op'];
      readonly position: string;
      readonly id: string;
      readonly data: string;
      /** The event's name and category after the change (before it, for a deletion): what stream filters compare. */
      readonly name: string;
      readonly category: string;
    };

type ChangeMessage = Extract<StreamMessage, { type: 'change' }>;

/** Where a stream starts: live only, after a position of the change log, or over again (`reset`) from one. */
export type StreamStart = { after?: undefined } | { after: string; reset?: boolean };

/** Where a client asks to resume (`Last-Event-ID`): after a change-log position, or after an event's creation. */
export type StreamResume = { position: string } | { eventId: string };

/** A change-log position as a stream id: a positive bigint, digits only. */
const POSITION = /^(?:0|[1-9][0-9]{0,17})$/;

/**
 * Reads `Last-Event-ID` (the controller's part): a change-log position (what the stream's ids are), or an
 * event id, which a client may have kept from before positions existed. Empty or absent: live only.
 */
export function readLastEventId(raw: string | string[] | undefined): StreamResume | undefined {
  if (raw === undefined || raw === '') return undefined;
  const value = typeof raw === 'string' ? raw.trim() : '';
  if (POSITION.test(value)) return { position: value };
  if (isUuid(value)) return { eventId: value.toLowerCase() };
  throw invalidHeader('Last-Event-ID', 'Last-Event-ID must be the id of a message of this stream.');
}

export interface OpenStreamOptions {
  /** Ends the stream (as `return()` does) when aborted. */
  signal?: AbortSignal;
  /** Only changes of events of this name and/or category (the replay too). */
  filter?: StreamFilter;
}

interface Queued {
  message: StreamMessage;
  /** What the message counts against the limit: replayed rows are read on demand and count nothing. */
  bytes: number;
}

const changeMessage = (change: EventChange & { data: string }): ChangeMessage => ({
  type: 'change',
  op: change.op,
  position: change.position,
  id: change.id,
  data: change.data,
  name: change.name,
  category: change.category,
});
const sizeOf = (message: StreamMessage) => (message.type === 'change' ? message.data.length + message.position.length : 64);
/** Positions are bigints: compared as such (their strings do not sort). */
const isAfter = (position: string, than: string) => BigInt(position) > BigInt(than);

/**
 * One open stream of a twin's timeline, read as an async iterator by one consumer. Messages pushed by
 * the registry (changes, heartbeats) wait in a queue until the consumer pulls them; the replay of a
 * resuming client is read from the database batch by batch as the consumer pulls, so a slow reader
 * never makes it read ahead.
 */
export class TimelineStream implements AsyncIterableIterator<StreamMessage> {
  private readonly queue: Queued[] = [];
  private queuedBytes = 0;
  /** Live changes held back while the replay runs; null once live. */
  private pending: ChangeMessage[] | null;
  /** Where the replay continues; undefined when there is none (left). */
  private replayAfter: string | undefined;
  /** The last position sent or skipped: a live change at or before it was already had (replay, reset). */
  private seenThrough: string | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  /** Ordered pulls: a `next()` starts once the previous one has answered. */
  private pulls: Promise<unknown> = Promise.resolve();
  /** No more input (shutdown, limit, failed replay): what is queued is still delivered. */
  private ended = false;
  /** The consumer is gone: nothing more is delivered. */
  private closed = false;

  constructor(
    readonly tenant: TwinTenant,
    start: StreamStart,
    heartbeatMs: number,
    private readonly readReplay: (after: string) => Promise<ChangeMessage[]>,
    private readonly onEnd: (stream: TimelineStream) => void,
    private readonly logger: Logger,
    private readonly signal?: AbortSignal,
    private readonly filter: StreamFilter = {},
  ) {
    this.seenThrough = start.after;
    this.replayAfter = start.after !== undefined && !start.reset ? start.after : undefined;
    this.pending = this.replayAfter === undefined ? null : [];
    this.push({ type: 'opened', twinId: tenant.twin.id, retryMs: RETRY_MS }, 0);
    if (start.after !== undefined && start.reset) this.push({ type: 'reset', position: start.after }, 0);
    this.heartbeat = setInterval(() => this.push({ type: 'heartbeat', at: new Date() }), heartbeatMs);
    this.heartbeat.unref();
    signal?.addEventListener('abort', this.abort, { once: true });
    if (signal?.aborted) this.close();
  }

  private readonly abort = () => this.close();

  /** True once nothing more will be delivered (the consumer may still pull what is queued). */
  get done(): boolean {
    return this.ended || this.closed;
  }

  /** A committed change of this stream's twin; one its filter does not take is left out. */
  deliver(message: ChangeMessage): void {
    if (this.done) return;
    if (this.filter.name !== undefined && message.name !== this.filter.name) return;
    if (this.filter.category !== undefined && message.category !== this.filter.category) return;
    if (!this.pending) {
      if (this.seenThrough !== undefined && !isAfter(message.position, this.seenThrough)) return;
      return this.push(message);
    }
    // Held back, but held for this client all the same: a replay goes at the client's pace, so a slow
    // one would otherwise let them pile up.
    this.pending.push(message);
    this.count(sizeOf(message));
  }

  next(): Promise<IteratorResult<StreamMessage, undefined>> {
    const pull = this.pulls.then(() => this.pull());
    this.pulls = pull.catch(() => undefined);
    return pull;
  }

  /** The consumer is gone: frees everything now, also while a `next()` waits. */
  return(): Promise<IteratorResult<StreamMessage, undefined>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** No more input: the stream ends once the consumer has pulled what is already queued. */
  end(): void {
    if (this.done) return;
    this.ended = true;
    this.release();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.pending = null;
    this.release();
  }

  private release(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    this.replayAfter = undefined;
    // The signal may live longer than the stream (one for many streams): the listener must not.
    this.signal?.removeEventListener('abort', this.abort);
    this.onEnd(this);
    this.wakeConsumer();
  }

  private push(message: StreamMessage, bytes = sizeOf(message)): void {
    if (this.done) return;
    this.queue.push({ message, bytes });
    this.count(bytes);
    this.wakeConsumer();
  }

  private count(bytes: number): void {
    this.queuedBytes += bytes;
    // A reader that does not keep up would otherwise make the queue grow without bound.
    if (this.queuedBytes > MAX_QUEUED_BYTES) this.end();
  }

  private wakeConsumer(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private async pull(): Promise<IteratorResult<StreamMessage, undefined>> {
    for (;;) {
      if (this.closed) return { value: undefined, done: true };
      const first = this.queue.shift();
      if (first) {
        this.queuedBytes -= first.bytes;
        return { value: first.message, done: false };
      }
      if (this.ended) return { value: undefined, done: true };
      if (this.replayAfter !== undefined) await this.replayBatch(this.replayAfter);
      else await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Queues the next batch of changes after `after`; the last batch switches to live. */
  private async replayBatch(after: string): Promise<void> {
    let messages: ChangeMessage[];
    try {
      messages = await this.readReplay(after);
    } catch (error) {
      this.logger.warn(`replay for twin ${this.tenant.twin.id} failed: ${(error as Error).message}`);
      this.end();
      return;
    }
    if (this.done) return;
    for (const message of messages) this.queue.push({ message, bytes: 0 });
    if (messages.length > 0) this.seenThrough = messages[messages.length - 1].position;
    if (messages.length === REPLAY_BATCH) {
      this.replayAfter = this.seenThrough;
      return;
    }
    this.replayAfter = undefined;
    this.goLive();
  }

  /**
   * Changes that arrived during the replay follow it, minus those it already sent: positions are in
   * commit order within the twin, so those are exactly the ones at or before its last position.
   */
  private goLive(): void {
    const pending = this.pending ?? [];
    this.pending = null;
    for (const message of pending) {
      this.queuedBytes -= sizeOf(message);
      this.deliver(message);
    }
  }
}

/**
 * The open event streams of this instance, by twin, fed by the event bus. Changes are handled one at
 * a time in arrival order (= commit order), so a stream never sees an update before its creation.
 * Knows nothing of HTTP: a stream is an async iterator of messages, whoever reads it.
 */
@Injectable()
export class EventStreams implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('EventStreams');
  private readonly byTwin = new Map<string, Set<TimelineStream>>();
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
   * Opens a stream of the tenant's twin: after `start.after`, the changes since (replayed from the
   * change log), or a `reset` and the changes after that position. Listens, and has the twin's changes
   * announced, before the stream exists, so that nothing committed after the replay's first query can
   * be missed; a failure to do either rejects here, before anything was sent.
   */
  async open(tenant: TwinTenant, start: StreamStart, options: OpenStreamOptions = {}): Promise<TimelineStream> {
    await this.bus.listen(
      (change) => this.enqueue(change),
      () => this.endAll(),
    );
    const unwatch = await this.bus.watch(tenant.twin.id);
    const stream = new TimelineStream(
      tenant,
      start,
      this.config.eventStreamHeartbeatMs,
      async (after) =>
        (await this.events.changesAfter(tenant, after, REPLAY_BATCH, options.filter)).flatMap((row) => {
          const change = eventChangeOf(row);
          return change ? [changeMessage({ ...change, data: row.resource })] : [];
        }),
      (ended) => {
        this.remove(ended);
        unwatch();
      },
      this.logger,
      options.signal,
      options.filter,
    );
    if (!stream.done) this.add(stream);
    return stream;
  }

  private add(stream: TimelineStream): void {
    const twinId = stream.tenant.twin.id;
    let streams = this.byTwin.get(twinId);
    if (!streams) this.byTwin.set(twinId, (streams = new Set()));
    streams.add(stream);
  }

  private remove(stream: TimelineStream): void {
    const streams = this.byTwin.get(stream.tenant.twin.id);
    if (!streams) return;
    streams.delete(stream);
    if (streams.size === 0) this.byTwin.delete(stream.tenant.twin.id);
  }

  private enqueue(change: EventChange): void {
    if (!this.byTwin.has(change.twinId)) return;
    this.queue = this.queue.then(() => this.dispatch(change)).catch((error: Error) => this.logger.warn(`delivering change ${change.position} failed: ${error.message}`));
  }

  private async dispatch(change: EventChange): Promise<void> {
    const streams = this.byTwin.get(change.twinId);
    if (!streams || streams.size === 0) return;
    // Announced without its resource (too big for a notification): read from the change log.
    const data = change.data ?? (await this.events.change(change.position))?.resource;
    if (data === undefined) return; // pruned already: the streams' clients will resume past it
    const message = changeMessage({ ...change, data });
    for (const stream of [...streams]) stream.deliver(message);
  }

  beforeApplicationShutdown(): void {
    this.endAll();
  }

  /** Ends every stream (what is queued is still delivered); their clients resume with `Last-Event-ID`. */
  private endAll(): void {
    for (const streams of [...this.byTwin.values()]) for (const stream of [...streams]) stream.end();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.bus.close();
  }
}
