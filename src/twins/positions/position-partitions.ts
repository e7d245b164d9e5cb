import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { rowShape } from '../../database/row-shape.js';
import { Sql } from '../../database/sql.js';
import { DAY_MS, utcDay } from './position-body.js';

/** Days whose partitions exist before their first position: today and the next ones (a device's clock may run a day ahead). */
const DAYS_AHEAD = 3;
/** How often an instance makes the coming days' partitions and drops the expired ones. */
const INTERVAL_MS = 60 * 60 * 1000;
/** Serialises partition changes across instances (pg_advisory_xact_lock's key). */
const PARTITION_LOCK = 7_363_960_001;

const PARTITION = rowShape({ day: 'text' });

/** The partition of positions that holds one UTC day (`YYYY-MM-DD`). */
const partitionName = (day: string): string => `positions_${day.replace(/-/g, '')}`;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The day partitions of `positions` (migration Positions): made ahead for the coming days, on demand for
 * any other day an upload names (a late batch, or any past day when POSITION_RETENTION_DAYS is 0), and
 * dropped whole once every position in them is past the retention: no row-by-row deletes, no vacuum debt.
 * Every instance does this hourly; an advisory lock keeps two from changing partitions at once, and the
 * days an instance knows of are kept in memory, so an upload asks the catalog only for a day it has not
 * seen. A dropped partition is detached first (CONCURRENTLY on PostgreSQL), so a running track read is
 * not cut off by an exclusive lock on the table.
 */
@Injectable()
export class PositionPartitions implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('PositionPartitions');
  private readonly known = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly sql: Sql,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.maintain();
    this.timer = setInterval(() => {
      this.running ??= this.maintain()
        .catch((error: Error) => this.logger.warn(`position partitions: ${error.message}`))
        .finally(() => (this.running = undefined));
    }, INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** Makes the coming days' partitions and drops the expired ones; the days dropped. */
  async maintain(now = Date.now()): Promise<string[]> {
    await this.ensure(Array.from({ length: DAYS_AHEAD + 1 }, (_, i) => utcDay(now + i * DAY_MS)));
    return this.dropExpired(now);
  }

  /**
   * Makes sure each day (`YYYY-MM-DD`) has its partition. Cheap when every day is known (no statement);
   * `recheck` asks the catalog even so (a partition this instance knew was dropped by another).
   */
  async ensure(days: Iterable<string>, recheck = false): Promise<void> {
    const missing = [...new Set(days)].filter((day) => recheck || !this.known.has(day));
    if (missing.length === 0) return;
    await this.refresh();
    const absent = missing.filter((day) => !this.known.has(day));
    if (absent.length === 0) return;
    await this.sql.transaction(async () => {
      await this.sql.run(`SELECT pg_advisory_xact_lock(${PARTITION_LOCK})`);
      for (const day of absent) {
        if (!DAY.test(day)) throw new Error(`not a day: ${day}`);
        const next = utcDay(Date.parse(`${day}T00:00:00Z`) + DAY_MS);
        await this.sql.run(
          `CREATE TABLE IF NOT EXISTS ${partitionName(day)} PARTITION OF positions FOR VALUES FROM ('${day} 00:00:00+00') TO ('${next} 00:00:00+00')`,
        );
      }
    });
    for (const day of absent) this.known.add(day);
  }

  /** Drops the partitions whose whole day is older than the retention (none when it is 0); the days dropped. */
  async dropExpired(now = Date.now()): Promise<string[]> {
    const days = this.config.positionRetentionDays;
    if (days <= 0) return [];
    // A partition goes when its day's end is past the retention: no position it holds is still kept.
    const oldestKept = utcDay(now - days * DAY_MS);
    await this.refresh();
    const expired = [...this.known].filter((day) => day < oldestKept).sort();
    for (const day of expired) {
      const name = partitionName(day);
      await this.detach(name);
      await this.sql.run(`DROP TABLE IF EXISTS ${name}`);
      this.known.delete(day);
    }
    if (expired.length > 0) this.logger.log(`dropped the positions of ${expired.length} day(s) older than ${days} days (through ${expired[expired.length - 1]})`);
    return expired;
  }

  /**
   * Detaches a partition without an exclusive lock on `positions` (CONCURRENTLY, outside a transaction);
   * the embedded database's one session detaches it plainly. One that another instance detached already
   * is no error: the DROP that follows is what counts.
   */
  private async detach(name: string): Promise<void> {
    try {
      await this.sql.run(`ALTER TABLE positions DETACH PARTITION ${name} CONCURRENTLY`);
    } catch {
      await this.sql.run(`ALTER TABLE positions DETACH PARTITION ${name}`).catch(() => undefined);
    }
  }

  /** Reads the days that have a partition from the catalog. */
  private async refresh(): Promise<void> {
    const rows = await this.sql.rows(
      PARTITION,
      `SELECT to_char(to_date(substr(c.relname, 11), 'YYYYMMDD'), 'YYYY-MM-DD') AS day
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'positions'::regclass AND c.relname ~ '^positions_[0-9]{8}$'`,
    );
    this.known.clear();
    for (const row of rows) this.known.add(row.day);
  }
}
