import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { Sql } from '../database/sql.js';

/** How long a registration lives without being renewed: past it, any instance deletes it (its instance died). */
const REGISTRATION_TTL_SECONDS = 120;
/** How often an instance renews its registrations and deletes the expired ones of others. */
const RENEW_INTERVAL_MS = 20_000;
/**
 * Renewals failing this long leave registrations that may expire, and so moves that are no longer
 * announced: the instance ends its streams (clients resume with `Last-Event-ID`, replayed from the log).
 */
const RENEWAL_GRACE_MS = (REGISTRATION_TTL_SECONDS * 1000) / 2;

/** Ends a watch (once, however often it is called). */
export type Unwatch = () => void;

interface Watch {
  /** Open watches of the twin on this instance. */
  count: number;
  /** Its row is in `streamed_twins` (committed). */
  registered: boolean;
  /** The twin's registration and removal run one after another, never interleaved. */
  op: Promise<void>;
}

/**
 * This instance's twins with an open event stream, kept in `streamed_twins` (migration StreamedTwins)
 * so that the writes of every instance announce their changes, and only theirs.
 *
 * A registration takes the twin's change-log lock before it commits: a write that drew its positions
 * before it committed before it (the stream's replay reads it from the log); one after it sees the row
 * (`twin_is_streamed` reads with a snapshot taken after the lock) and notifies.
 */
export class StreamedTwins {
  private readonly instanceId = randomUUID();
  private readonly watches = new Map<string, Watch>();
  private renewedAt = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;

  constructor(
    private readonly sql: Sql,
    /** Called when registrations may have lapsed, so changes may have gone unannounced: every stream must end. */
    private readonly missed: () => void,
    private readonly logger = new Logger('StreamedTwins'),
  ) {}

  /** Registers the twin (once per instance) and resolves when its changes will be announced. */
  async watch(twinId: string): Promise<Unwatch> {
    this.start();
    let watch = this.watches.get(twinId);
    if (!watch) this.watches.set(twinId, (watch = { count: 0, registered: false, op: Promise.resolve() }));
    const current = watch;
    current.count++;
    let released = false;
    const unwatch = () => {
      if (released) return;
      released = true;
      this.unwatch(twinId, current);
    };
    current.op = current.op
      .catch(() => undefined)
      .then(async () => {
        if (current.registered || current.count === 0) return;
        await this.register(twinId);
        current.registered = true;
      });
    try {
      await current.op;
    } catch (error) {
      unwatch();
      throw error;
    }
    return unwatch;
  }

  /** Deletes this instance's registrations (shutdown). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.renewing;
    if (this.watches.size === 0) return;
    this.watches.clear();
    await this.sql.run(`DELETE FROM streamed_twins WHERE instance_id = $1`, [this.instanceId]).catch((error: Error) => this.logger.warn(`removing the stream registrations failed: ${error.message}`));
  }

  private unwatch(twinId: string, watch: Watch): void {
    watch.count--;
    if (watch.count > 0) return;
    const op = (watch.op = watch.op
      .catch(() => undefined)
      .then(async () => {
        if (watch.count > 0 || !watch.registered) return;
        watch.registered = false;
        await this.sql
          .run(`DELETE FROM streamed_twins WHERE twin_id = $1 AND instance_id = $2`, [twinId, this.instanceId])
          .catch((error: Error) => this.logger.warn(`removing the stream registration of twin ${twinId} failed (it expires): ${error.message}`));
      })
      .finally(() => {
        // Forgotten only when nothing was chained since: a later watch of the twin must follow this removal.
        if (watch.op === op && watch.count === 0 && this.watches.get(twinId) === watch) this.watches.delete(twinId);
      }));
  }

  private register(twinId: string): Promise<void> {
    return this.sql.run(
      `WITH change_log_lock AS MATERIALIZED (SELECT pg_advisory_xact_lock(change_log_lock_key($1)))
       INSERT INTO streamed_twins (twin_id, instance_id, expires)
       SELECT $1, $2, now() + make_interval(secs => $3) FROM change_log_lock
       ON CONFLICT (twin_id, instance_id) DO UPDATE SET expires = EXCLUDED.expires`,
      [twinId, this.instanceId, REGISTRATION_TTL_SECONDS],
    );
  }

  private start(): void {
    if (this.timer) return;
    this.renewedAt = Date.now();
    this.timer = setInterval(() => (this.renewing ??= this.renew().finally(() => (this.renewing = undefined))), RENEW_INTERVAL_MS);
    this.timer.unref();
  }

  /** Keeps this instance's registrations alive and deletes those no instance kept (it died). */
  private async renew(): Promise<void> {
    const startedAt = Date.now();
    try {
      await this.sql.run(
        `WITH renewed AS (UPDATE streamed_twins SET expires = now() + make_interval(secs => $2) WHERE instance_id = $1)
         DELETE FROM streamed_twins WHERE expires < now() AND instance_id <> $1`,
        [this.instanceId, REGISTRATION_TTL_SECONDS],
      );
      this.renewedAt = startedAt;
    } catch (error) {
      this.logger.warn(`renewing the stream registrations failed: ${(error as Error).message}`);
      if (Date.now() - this.renewedAt > RENEWAL_GRACE_MS && this.watches.size > 0) this.missed();
    }
  }
}
