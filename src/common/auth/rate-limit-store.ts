import type { FastifyRateLimitStore } from '@fastify/rate-limit';

type Counted = { current: number; ttl: number };
type StoreReply = (error: Error | null, result?: Counted) => void;

/** What FailoverStore needs of the two stores of @fastify/rate-limit it wraps. */
export type CountingStore = Pick<FastifyRateLimitStore, 'incr'>;

/** What FailoverStore needs of the ioredis client behind the shared store. */
export interface RedisHealth {
  /** ioredis: 'ready' once connected; anything else and commands would fail at once (no offline queue). */
  readonly status: string;
  ping(callback: (error?: Error | null) => void): unknown;
}

export interface FailoverOptions {
  /** REDIS_COMMAND_TIMEOUT_MS: a count not answered within it is taken from the local store instead. */
  budgetMs: number;
  /** REDIS_RETRY_AFTER_MS: after a failure, how long counts stay local before Redis is pinged again. */
  retryAfterMs: number;
  log: { warn(message: string): void; log(message: string): void };
}

/**
 * The rate-limit store of a replica with REDIS_URL: the plugin's Redis store (counts shared by every
 * replica) while Redis answers, the plugin's in-memory store (per-instance limits, never no limit)
 * while it does not.
 *
 * A frozen Redis (a partition that keeps connections open) fails nothing: its replies just never come.
 * So each shared count has REDIS_COMMAND_TIMEOUT_MS; one failure or timeout marks Redis down for
 * REDIS_RETRY_AFTER_MS, during which requests never wait on it, and a background PING decides when it is
 * back. A frozen Redis thus costs one request the budget, not every request a timeout.
 */
export class FailoverStore implements FastifyRateLimitStore {
  private down = false;
  private probe: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly redis: RedisHealth,
    private readonly shared: CountingStore,
    private readonly local: CountingStore,
    private readonly options: FailoverOptions,
  ) {}

  /** True while counts are taken per instance because Redis failed. */
  get degraded(): boolean {
    return this.down;
  }

  incr(key: string, callback: StoreReply, timeWindow: number, max: number): void {
    // Not connected (yet, or while ioredis reconnects on its own): nothing waits for it meanwhile.
    if (this.down || this.redis.status !== 'ready') return this.local.incr(key, callback, timeWindow, max);
    withinBudget<Counted>(
      (reply) => this.shared.incr(key, reply, timeWindow, max),
      this.options.budgetMs,
      (error, counted) => {
        if (!error) return callback(null, counted);
        this.markDown(error);
        this.local.incr(key, callback, timeWindow, max);
      },
    );
  }

  /** Per-route limits (`config.rateLimit` on a route) would need a store per route; the service has one limit. */
  child(): FastifyRateLimitStore {
    throw new Error('FailoverStore: per-route rate limits are not supported; the service has one limit per token');
  }

  /** Also called for ioredis 'error' events (connection refused, reset), so a dead Redis is noticed before a request waits on it. */
  markDown(error: Error): void {
    if (this.down || this.closed) return;
    this.down = true;
    this.options.log.warn(
      `Redis unavailable for rate limiting (${error.message}); counting per instance, retrying in ${this.options.retryAfterMs} ms`,
    );
    this.scheduleProbe();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.probe);
  }

  private scheduleProbe(): void {
    clearTimeout(this.probe);
    if (this.closed) return;
    this.probe = setTimeout(() => {
      // At least a second for the PING: nothing waits on it, and a slow first answer is no reason to stay local.
      withinBudget((reply) => this.redis.ping(reply), Math.max(1000, this.options.budgetMs), (error) => {
        if (error) return this.scheduleProbe();
        this.down = false;
        this.options.log.log('Redis answers again: rate limits are shared across instances');
      });
    }, this.options.retryAfterMs);
    this.probe.unref();
  }
}

/**
 * Calls `done` with what `start` replies, or with an error once `budgetMs` passed without a reply;
 * whichever comes first, once. When the timer fires, the verdict waits for the check phase of the event
 * loop (setImmediate), after the poll phase has read whatever arrived on the sockets: after a pause of
 * the process (GC, a large synchronous parse), a reply that came in time is not taken for a timeout.
 * Callbacks rather than promises: this runs on every counted request.
 */
export function withinBudget<T>(
  start: (reply: (error?: Error | null, value?: T) => void) => void,
  budgetMs: number,
  done: (error: Error | null, value?: T) => void,
): void {
  let settled = false;
  const timer = setTimeout(
    () =>
      setImmediate(() => {
        if (settled) return;
        settled = true;
        done(new Error(`Redis did not answer within ${budgetMs} ms`));
      }),
    budgetMs,
  );
  start((error, value) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    if (error) done(error instanceof Error ? error : new Error(String(error)));
    else done(null, value);
  });
}
