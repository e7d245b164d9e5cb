import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { EventsRepository } from './events.repository.js';

/** Events deleted per statement: one statement holds its row locks and WAL for a few milliseconds (docs/SCALING.md). */
export const EVENT_RETENTION_BATCH = 2000;
/** How often an instance looks for events past the retention (each instance does; SKIP LOCKED keeps them apart). */
const INTERVAL_MS = 10 * 60 * 1000;
/** Between two batches: concurrent writes of the same pages and the WAL writer get their turn. */
const PAUSE_MS = 20;

/**
 * Timeline retention (EVENT_RETENTION_DAYS; 0 keeps events forever): events whose `timestamp` (the
 * service's receipt time) is older are deleted off the request path, in batches of bounded work, by
 * every instance every few minutes. Batched deletes rather than monthly partitions: a partitioned
 * `events` would need the partition key in its primary key, and then `INSERT … ON CONFLICT (id)` could
 * no longer refuse a client-chosen id reused across months (docs/SCALING.md, "Retention").
 *
 * The deletes write no change-log rows: retention is housekeeping, not a change a stream or a webhook
 * receiver is told about (a client reloading the timeline simply no longer sees the old events).
 * `events_timestamp_brin` (rows arrive in `timestamp` order) finds the oldest rows without reading the
 * heap from its start past the pages already emptied.
 */
@Injectable()
export class EventRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('EventRetention');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopping = false;

  constructor(
    private readonly events: EventsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.eventRetentionDays === 0) return;
    this.timer = setInterval(() => {
      this.running ??= this.purge()
        .then((deleted) => deleted > 0 && this.logger.log(`deleted ${deleted} events older than ${this.config.eventRetentionDays} days`))
        .catch((error: Error) => this.logger.warn(`event retention failed: ${error.message}`))
        .finally(() => (this.running = undefined));
    }, INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** One batch: deletes at most `batch` events older than `days`; the number deleted. */
  async purgeBatch(days = this.config.eventRetentionDays, batch = EVENT_RETENTION_BATCH): Promise<number> {
    if (days <= 0) return 0;
    return this.events.deleteOlderThan(days, batch);
  }

  /** Batches until none is full (or the instance stops); the number deleted. */
  async purge(days = this.config.eventRetentionDays, batch = EVENT_RETENTION_BATCH): Promise<number> {
    let total = 0;
    while (!this.stopping) {
      const deleted = await this.purgeBatch(days, batch);
      total += deleted;
      if (deleted < batch) break;
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    }
    return total;
  }
}
