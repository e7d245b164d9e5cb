import { Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import Redis from 'ioredis';
import type { AppConfig } from '../../config/app-config.js';
import { tooManyRequests } from '../json-api/api-error.js';

/**
 * Per-token request budget in fixed windows (RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW_MS).
 * `consume` throws the 429 (with `Retry-After`) once the budget of the current window is spent.
 */
export abstract class RateLimiter {
  constructor(protected readonly config: Pick<AppConfig, 'rateLimitMax' | 'rateLimitWindowMs'>) {}

  /** False with RATE_LIMIT_MAX=0: nothing is counted. */
  get limiting(): boolean {
    return this.config.rateLimitMax > 0;
  }

  async consume(key: string): Promise<void> {
    const { rateLimitMax: max, rateLimitWindowMs: windowMs } = this.config;
    if (max === 0) return;
    const now = Date.now();
    const windowStart = now - (now % windowMs);
    const count = await this.increment(key, windowStart, windowMs);
    if (count > max) throw tooManyRequests(Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000)));
  }

  /** Counts one request of `key` in the window starting at `windowStart`; returns the window's count. */
  protected abstract increment(key: string, windowStart: number, windowMs: number): Promise<number>;

  static create(config: AppConfig): RateLimiter {
    // With limiting off (RATE_LIMIT_MAX=0) nothing is counted: no Redis connection to keep open.
    return config.redisUrl && config.rateLimitMax > 0 ? new RedisRateLimiter(config, config.redisUrl) : new MemoryRateLimiter(config);
  }
}

/** Counts in this process: right for one instance, per-instance budgets for several. */
export class MemoryRateLimiter extends RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private lastSweep = 0;

  protected async increment(key: string, windowStart: number): Promise<number> {
    return this.countLocally(key, windowStart);
  }

  /** The count itself, synchronous, for the Redis limiter's per-instance fallback as well. */
  countLocally(key: string, windowStart: number): number {
    if (windowStart !== this.lastSweep) {
      // A new window began: forget finished ones, so memory follows the tokens active right now.
      this.lastSweep = windowStart;
      for (const [k, w] of this.windows) if (w.start < windowStart) this.windows.delete(k);
    }
    let window = this.windows.get(key);
    if (!window || window.start !== windowStart) {
      window = { start: windowStart, count: 0 };
      this.windows.set(key, window);
    }
    return ++window.count;
  }
}

const INCREMENT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`;

/**
 * Counts in Redis, shared by every instance, within a small time budget per request
 * (REDIS_COMMAND_TIMEOUT_MS). A Redis that fails or does not answer in time is treated as down for
 * REDIS_RETRY_AFTER_MS: meanwhile requests are counted in this process (per-instance limits) and never
 * wait on Redis; a background PING decides when it is back. A frozen Redis (a partition that keeps
 * connections open) thus costs one request at most the budget, instead of every request a timeout.
 */
export class RedisRateLimiter extends RateLimiter implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimiter');
  private readonly redis: Redis & { incrementWindow(key: string, windowMs: string): Promise<number> };
  private readonly fallback: MemoryRateLimiter;
  private readonly retryAfterMs: number;
  private readonly budgetMs: number;
  private down = false;
  private probe: NodeJS.Timeout | undefined;

  constructor(
    config: Pick<AppConfig, 'rateLimitMax' | 'rateLimitWindowMs' | 'redisCommandTimeoutMs' | 'redisRetryAfterMs'>,
    url: string,
  ) {
    super(config);
    this.retryAfterMs = config.redisRetryAfterMs;
    this.fallback = new MemoryRateLimiter(config);
    this.budgetMs = config.redisCommandTimeoutMs;
    // No ioredis commandTimeout: its timer can fire after an event-loop pause (GC, a large body) before
    // the reply already waiting on the socket is read, and mark a healthy Redis down. See withinBudget.
    const redis = new Redis(url, { maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 1000 });
    // Sent by its SHA (EVALSHA, the script itself only when Redis does not have it yet), not on every request.
    redis.defineCommand('incrementWindow', { numberOfKeys: 1, lua: INCREMENT_SCRIPT });
    this.redis = redis as typeof this.redis;
    this.redis.on('error', (error) => this.markDown(error));
  }

  /** Boot waits for the connection (at most its connect timeout), so the first requests share the budget. */
  async onModuleInit(): Promise<void> {
    if (this.redis.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, 1000);
      this.redis.once('ready', done);
    });
  }

  protected async increment(key: string, windowStart: number, windowMs: number): Promise<number> {
    // Not connected (yet, or again): ioredis reconnects on its own; nothing waits for it meanwhile.
    if (this.down || this.redis.status !== 'ready') return this.fallback.countLocally(key, windowStart);
    try {
      const count = await withinBudget(this.redis.incrementWindow(`twin-service:rate:${key}:${windowStart}`, String(windowMs)), this.budgetMs);
      return Number(count);
    } catch (error) {
      this.markDown(error);
      return this.fallback.countLocally(key, windowStart);
    }
  }

  private markDown(error: unknown): void {
    if (this.down) return;
    this.down = true;
    this.logger.warn(
      `Redis unavailable for rate limiting (${(error as Error).message}); counting per instance, retrying in ${this.retryAfterMs} ms`,
    );
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    clearTimeout(this.probe);
    this.probe = setTimeout(() => {
      withinBudget(this.redis.ping(), Math.max(1000, this.budgetMs)).then(
        () => {
          this.down = false;
          this.logger.log('Redis answers again: rate limits are shared across instances');
        },
        () => this.scheduleProbe(),
      );
    }, this.retryAfterMs);
    this.probe.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearTimeout(this.probe);
    this.redis.disconnect();
  }
}

/**
 * `reply`, or a rejection once `budgetMs` passed without it. When the timer fires, the verdict waits
 * for the check phase of the event loop (setImmediate), after the poll phase has read whatever arrived
 * on the sockets: after a pause of the process, a reply that came in time is not taken for a timeout.
 */
export function withinBudget<T>(reply: Promise<T>, budgetMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (settled) return;
          settled = true;
          reject(new Error(`Redis did not answer within ${budgetMs} ms`));
        }),
      budgetMs,
    );
    reply.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
