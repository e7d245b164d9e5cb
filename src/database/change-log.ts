import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Sql } from './sql.js';
import { rowShape, typed, type RowShape } from './row-shape.js';

/**
 * The change log (table `changes`, migration ChangeLog): what every write of an event, twin or quest
 * records in its own statement, so the record commits with the change or not at all. The event stream
 * resumes from it; webhook deliveries are made from it.
 */

/** Every kind of change the log records; each is also a webhook event type (webhooks subscribe to these). */
export const CHANGE_KINDS = ['event.created', 'event.updated', 'event.deleted', 'twin.created', 'twin.updated', 'twin.moved', 'quest.published', 'quest.embarked', 'geofence.entered', 'geofence.exited'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** A row of the change log as statements read it (the position as text). */
export interface ChangeRow {
  /** bigint, as text: statements select `position::text` (a JavaScript number cannot hold every bigint). */
  position: string;
  kind: ChangeKind;
  twin_id: string | null;
  subject_id: string;
  name: string | null;
  category: string | null;
  resource: string;
}

/** The columns of a ChangeRow, for statements that read changes. */
export const CHANGE_ROW: RowShape<ChangeRow> = rowShape({
  position: 'text',
  kind: typed<ChangeKind>(),
  twin_id: 'uuid?',
  subject_id: 'uuid',
  name: 'varchar?',
  category: 'varchar?',
  resource: 'text',
});

const CHANGE_RETURNING = CHANGE_ROW.columns.join(', ');

/** What one statement records: a change row per row of `from` (SQL expressions over its columns). */
export interface ChangeRecord {
  kind: ChangeKind;
  /**
   * The kind as SQL over the rows of `from`, when the statement records changes of several kinds (each
   * row's one of `kind`'s family: geofence crossings are `geofence.entered` or `geofence.exited`).
   */
  kindSql?: string;
  /** The FROM list the changed rows come from (usually the CTE of the INSERT/UPDATE/DELETE … RETURNING). */
  from: string;
  organization: string;
  twin: string | null;
  subject: string;
  /** An event's name and category (stream filters); null for other kinds. */
  name?: string;
  category?: string;
  /** The resource's JSON text as committed (a deletion: its identifier). */
  resource: string;
  /**
   * The scope (a twin's id, SQL) that every recorded row belongs to, when the statement records many:
   * it then takes that scope's position lock once and draws the positions itself, in the order of `from`,
   * instead of the table's trigger doing both per row (migration ChangeLogBatchPositions).
   */
  positionsOf?: string;
}

/**
 * `INSERT INTO changes … RETURNING …`, to be a CTE of the changing statement. The position is drawn by
 * the table's trigger (per-twin commit order), or by the statement under the same lock (`positionsOf`);
 * the statement returns the rows as ChangeRow. That lock is held until commit, so the statement's other
 * writes should come before it: a data-modifying CTE nothing reads runs after the main query, the last
 * declared first, so one declared before this CTE and left unread runs after it, with the lock held
 * (QuestsRepository.embark reads its writes in the main query for that reason).
 */
export function recordChangesSql(record: ChangeRecord): string {
  const columns = 'organization_id, twin_id, kind, subject_id, name, category, resource';
  const values = `${record.organization}, ${record.twin ?? 'NULL::uuid'}, ${record.kindSql ?? `'${record.kind}'`}, ${record.subject},
                  ${record.name ?? 'NULL'}, ${record.category ?? 'NULL'}, ${record.resource}`;
  if (record.positionsOf === undefined) {
    return `INSERT INTO changes (${columns})
           SELECT ${values}
             FROM ${record.from}
         RETURNING ${CHANGE_RETURNING}`;
  }
  // The lock is a materialized CTE joined to the rows: taken once, and before any position is drawn
  // (nextval is evaluated above the join and its ORDER BY, on rows the join can only make after it).
  return `INSERT INTO changes (position, ${columns})
           WITH change_log_lock AS MATERIALIZED (SELECT pg_advisory_xact_lock(change_log_lock_key(${record.positionsOf})))
           SELECT nextval('changes_position_seq'), ${values}
             FROM change_log_lock, ${record.from}
         RETURNING ${CHANGE_RETURNING}`;
}

/** One change recorded on its own (in the caller's transaction), when its resource is built in TypeScript. */
export interface RecordedChange {
  kind: ChangeKind;
  organizationId: string;
  twinId: string | null;
  subjectId: string;
  /** The resource's JSON text as committed. */
  resource: string;
}

/** PostgreSQL's NOTIFY payload limit is 8000 bytes; a change whose resource is bigger is announced without it. */
const NOTIFY_RESOURCE_MAX = 7600;

/**
 * `pg_notify(channel, …)` of the change row aliased `c` when someone streams its twin (migration
 * StreamedTwins), evaluated in the writing statement so that PostgreSQL delivers it when, and only if,
 * the transaction commits, in commit order. The payload is the ChangeRow as JSON, without `resource`
 * when that would not fit (listeners then read it by position). Must be evaluated over the rows the
 * statement's change CTE returned: their positions were drawn under the twin's change-log lock, which
 * the streams' registration takes too. `streamed`: SQL of whether the twin is streamed, asked after that
 * lock was taken (by default, asked for this row).
 */
export function notifyChangeSql(channel: string, c = 'c', streamed = `twin_is_streamed(${c}.twin_id)`): string {
  const head = `'position', ${c}.position::text, 'kind', ${c}.kind, 'twin_id', ${c}.twin_id, 'subject_id', ${c}.subject_id, 'name', ${c}.name, 'category', ${c}.category`;
  return `CASE WHEN ${streamed}
               THEN pg_notify('${channel}', CASE WHEN octet_length(${c}.resource) <= ${NOTIFY_RESOURCE_MAX}
                                                 THEN json_build_object(${head}, 'resource', ${c}.resource)
                                                 ELSE json_build_object(${head}) END::text) END`;
}

/** Rows pruned per statement: bounded work, short locks. */
const PRUNE_BATCH = 5000;

const DELETED = rowShape({ deleted: 'integer' });
const RESUMABLE = rowShape({ ok: 'boolean', head: 'text' });

/** How often an instance prunes (each instance does; the deletes do not collide: SKIP LOCKED). */
const PRUNE_INTERVAL_MS = 5 * 60 * 1000;

/**
 * Keeps the change log to its retention (STREAM_RETENTION_HOURS): every few minutes, rows older than
 * that are deleted in bounded batches, off the request path, and `change_log_state.pruned_through`
 * remembers the highest position deleted, so a stream resuming from before it is told to reset.
 */
@Injectable()
export class ChangeLog implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ChangeLog');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly sql: Sql,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.prune()
        .catch((error: Error) => this.logger.warn(`pruning the change log failed: ${error.message}`))
        .finally(() => (this.running = undefined));
    }, PRUNE_INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /**
   * Records a change whose statement could not (its resource is built in TypeScript: quests). Must run
   * in the change's own transaction, so the record and the change commit together.
   */
  async record(change: RecordedChange): Promise<void> {
    if (!this.sql.inTransaction) throw new Error(`the ${change.kind} change must be recorded in its own transaction`);
    await this.sql.run(
      `INSERT INTO changes (organization_id, twin_id, kind, subject_id, resource) VALUES ($1, $2, $3, $4, $5)`,
      [change.organizationId, change.twinId, change.kind, change.subjectId, change.resource],
    );
  }

  /** Deletes every row past the retention, a batch per statement; the number deleted. */
  async prune(retentionHours = this.config.streamRetentionHours): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.sql.value(
        DELETED,
        `WITH gone AS (
           DELETE FROM changes WHERE position IN (
             SELECT position FROM changes WHERE changed < now() - make_interval(secs => $1 * 3600) LIMIT $2 FOR UPDATE SKIP LOCKED)
           RETURNING position),
         state AS (
           UPDATE change_log_state SET pruned_through = greatest(pruned_through, (SELECT max(position) FROM gone))
            WHERE EXISTS (SELECT FROM gone))
         SELECT count(*)::int AS deleted FROM gone`,
        [retentionHours, PRUNE_BATCH],
      );
      total += deleted;
      if (deleted < PRUNE_BATCH) return total;
    }
  }

  /**
   * Where a resume from `position` stands: `ok` when every later change is still in the log, else
   * `reset` (pruned past it, or a position this log never gave, as after a restore). `head` is the last
   * position drawn, where a reset stream continues from.
   */
  async resumable(position: string): Promise<{ ok: boolean; head: string }> {
    const [row] = await this.sql.rows(
      RESUMABLE,
      `SELECT $1::bigint >= s.pruned_through AND $1::bigint <= q.head AS ok, q.head::text AS head
         FROM change_log_state s,
              (SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS head FROM changes_position_seq) q`,
      [position],
    );
    return row;
  }
}
