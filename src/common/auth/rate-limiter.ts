import { Logger, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import type { AppConfig } from '../../config/app-config.js';
import { tooManyRequests } from '../json-api/api-error.js';

/**
 * Per-token request budget in fixed windows (RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW_MS).
 * `consume` throws the 429 (with `Retry-After`) once the budget of the current window is spent.
 */
export abstract class RateLimiter {
  constructor(protected readonly config: Pick<AppConfig, 'rateLimitMax' | 'rateLimitWindowMs'>) {}

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
 * Counts in Redis, shared by every instance. When Redis is unreachable the request is let through
 * (and logged): losing rate limiting for a moment is better than refusing all traffic.
 */
export class RedisRateLimiter extends RateLimiter implements OnApplicationShutdown {
  private readonly logger = new Logger('RateLimiter');
  private readonly redis: Redis & { incrementWindow(key: string, windowMs: string): Promise<number> };
  private lastWarning = 0;

  constructor(config: AppConfig, url: string) {
    super(config);
    const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 1000 });
    // Sent by its SHA (EVALSHA, the script itself only when Redis does not have it yet), not on every request.
    redis.defineCommand('incrementWindow', { numberOfKeys: 1, lua: INCREMENT_SCRIPT });
    this.redis = redis as typeof this.redis;
    this.redis.on('error', (error) => this.warn(error));
  }

  protected async increment(key: string, windowStart: number, windowMs: number): Promise<number> {
    try {
      const count = await this.redis.incrementWindow(`twin-service:rate:${key}:${windowStart}`, String(windowMs));
      return Number(count);
    } catch (error) {
      this.warn(error);
      return 0;
    }
  }

  private warn(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarning < 10_000) return;
    this.lastWarning = now;
    this.logger.warn(`Redis unavailable for rate limiting, requests are not limited: ${(error as Error).message}`);
  }

  async onApplicationShutdown(): Promise<void> {
    this.redis.disconnect();
  }
}
