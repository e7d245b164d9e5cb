import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { tooManyRequests } from '../json-api/api-error.js';

/**
 * Per-token request budget in fixed windows. This in-process store counts per instance; a shared
 * store (Redis) can replace it behind the same `consume` call.
 */
@Injectable()
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private lastSweep = Date.now();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async consume(key: string): Promise<void> {
    const { rateLimitMax: max, rateLimitWindowMs: windowMs } = this.config;
    if (max === 0) return;
    const now = Date.now();
    const windowStart = now - (now % windowMs);
    this.sweep(now, windowStart);
    let window = this.windows.get(key);
    if (!window || window.start !== windowStart) {
      window = { start: windowStart, count: 0 };
      this.windows.set(key, window);
    }
    window.count += 1;
    if (window.count > max) {
      throw tooManyRequests(Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000)));
    }
  }

  /** Forget finished windows so memory stays proportional to the tokens active right now. */
  private sweep(now: number, windowStart: number): void {
    if (now - this.lastSweep < this.config.rateLimitWindowMs) return;
    this.lastSweep = now;
    for (const [key, window] of this.windows) if (window.start < windowStart) this.windows.delete(key);
  }
}
