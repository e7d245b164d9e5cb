import { Injectable } from '@nestjs/common';
import { Sql } from '../database/sql.js';
import type { PageRequest } from '../common/json-api/pagination.js';
import { select, webhookAttempts, webhooks, type Row } from '../database/schema/index.js';
import type { AttemptOutcome } from './webhook-sender.js';
import { rowShape, tableShape, typed, type RowShape } from '../database/row-shape.js';

export type WebhookRow = Omit<Row<typeof webhooks>, 'secret_sealed' | 'previous_secret_sealed'>;
export type AttemptRow = Omit<Row<typeof webhookAttempts>, 'webhook_id' | 'organization_id'>;

/** What a worker needs to make one attempt. */
export interface ClaimedDelivery {
  id: string;
  /** The webhook's organization: its attempts are recorded in it. */
  organization_id: string;
  webhook_id: string;
  kind: string;
  body: string;
  /** This attempt's number (1 for the first). */
  attempts: number;
  /** When the delivery was queued, in ms since the epoch (the retry window counts from it). */
  queued_ms: number;
  url: string;
  secret_sealed: Buffer;
  /** The secret a rotation replaced, while its overlap lasts: attempts are signed with both. */
  previous_secret_sealed: Buffer | null;
}

/** How an attempt ends the delivery's state: delivered, failed for good, or due again at `nextAttempt`. */
export type AttemptResult = { state: 'delivered' | 'failed' } | { state: 'pending'; nextAttempt: Date };

/** A replaced secret that still signs, in `w`'s row: null once its overlap has ended. */
const previousSecret = (w: string, column: 'previous_secret_sealed' | 'previous_secret_expires') => `CASE WHEN ${w}.previous_secret_expires > now() THEN ${w}.${column} END`;

const WEBHOOK_COLUMNS = ['id', 'organization_id', 'url', 'events', 'description', 'enabled', 'previous_secret_expires', 'created', 'modified'] as const;
const COLUMNS = select(webhooks, 'w', {
  only: WEBHOOK_COLUMNS,
  expressions: { previous_secret_expires: (w) => previousSecret(w, 'previous_secret_expires') },
});
const WEBHOOK: RowShape<WebhookRow> = tableShape(webhooks, WEBHOOK_COLUMNS);
const ATTEMPT_COLUMN_NAMES = ['id', 'delivery_id', 'kind', 'attempt', 'status_code', 'error', 'duration_ms', 'attempted'] as const;
const ATTEMPT_COLUMNS = select(webhookAttempts, 'a', { only: ATTEMPT_COLUMN_NAMES });
const ATTEMPT: RowShape<AttemptRow> = tableShape(webhookAttempts, ATTEMPT_COLUMN_NAMES);
const COUNT = rowShape({ count: 'integer' });
const CLAIMED: RowShape<ClaimedDelivery> = rowShape({
  id: 'uuid',
  organization_id: 'uuid',
  webhook_id: 'uuid',
  kind: 'varchar',
  body: 'text',
  attempts: 'integer',
  queued_ms: typed<number>(),
  url: 'text',
  secret_sealed: 'bytea',
  previous_secret_sealed: 'bytea?',
});

export interface WebhookChanges {
  url?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
}

/** SQL of the webhooks: the partner-facing rows (every read scoped to the organization) and the outbox the workers drain. */
@Injectable()
export class WebhooksRepository {
  constructor(private readonly sql: Sql) {}

  async create(organizationId: string, webhook: { id: string; url: string; events: string[]; description: string | null; sealed: Buffer }): Promise<WebhookRow> {
    return this.sql.one(
      WEBHOOK,
      `INSERT INTO webhooks AS w (id, organization_id, url, events, description, secret_sealed)
       VALUES ($1, $2, $3, $4::varchar[], $5, $6)
       RETURNING ${COLUMNS}`,
      [webhook.id, organizationId, webhook.url, webhook.events, webhook.description, webhook.sealed],
    );
  }

  async count(organizationId: string): Promise<number> {
    return this.sql.value(COUNT, `SELECT count(*)::int AS count FROM webhooks WHERE organization_id = $1`, [organizationId]);
  }

  page(organizationId: string, page: PageRequest): Promise<WebhookRow[]> {
    return this.sql.rows(
      WEBHOOK,
      `SELECT ${COLUMNS} FROM webhooks w WHERE w.organization_id = $1 ORDER BY w.created, w.id LIMIT $2 OFFSET $3`,
      [organizationId, page.size, page.offset],
    );
  }

  async find(organizationId: string, id: string): Promise<WebhookRow | undefined> {
    return this.sql.first(WEBHOOK, `SELECT ${COLUMNS} FROM webhooks w WHERE w.organization_id = $1 AND w.id = $2`, [organizationId, id]);
  }

  /** Only the attributes given change; `modified` moves. Undefined when the organization has no such webhook. */
  async update(organizationId: string, id: string, changes: WebhookChanges): Promise<WebhookRow | undefined> {
    return this.sql.first(
      WEBHOOK,
      `UPDATE webhooks w
          SET url = CASE WHEN $3 THEN $4 ELSE w.url END,
              events = CASE WHEN $5 THEN $6::varchar[] ELSE w.events END,
              description = CASE WHEN $7 THEN $8 ELSE w.description END,
              enabled = CASE WHEN $9 THEN $10 ELSE w.enabled END,
              modified = now()
        WHERE w.organization_id = $1 AND w.id = $2
        RETURNING ${COLUMNS}`,
      [
        organizationId,
        id,
        changes.url !== undefined,
        changes.url ?? null,
        changes.events !== undefined,
        changes.events ?? null,
        changes.description !== undefined,
        changes.description ?? null,
        changes.enabled !== undefined,
        changes.enabled ?? null,
      ],
    );
  }

  /**
   * Seals in a new secret. With `overlapSeconds` > 0 the replaced one keeps signing beside it for that
   * long (SET reads the row as it was, so `previous_secret_sealed` takes the old secret); with 0 it stops
   * at once, and so does any earlier overlap.
   */
  async replaceSecret(organizationId: string, id: string, sealed: Buffer, overlapSeconds: number): Promise<WebhookRow | undefined> {
    return this.sql.first(
      WEBHOOK,
      `UPDATE webhooks w
          SET secret_sealed = $3,
              previous_secret_sealed = CASE WHEN $4::float8 > 0 THEN w.secret_sealed END,
              previous_secret_expires = CASE WHEN $4::float8 > 0 THEN now() + make_interval(secs => $4::float8) END,
              modified = now()
        WHERE w.organization_id = $1 AND w.id = $2
        RETURNING ${COLUMNS}`,
      [organizationId, id, sealed, overlapSeconds],
    );
  }

  /** Its deliveries and attempts go with it (ON DELETE CASCADE). Whether it existed. */
  async delete(organizationId: string, id: string): Promise<boolean> {
    return (await this.sql.affected(`DELETE FROM webhooks WHERE organization_id = $1 AND id = $2`, [organizationId, id])) > 0;
  }

  /**
   * Deletes delivered and failed deliveries, and attempts, older than the retention, a bounded batch per
   * statement (the outbox and the log would otherwise grow for ever); pending deliveries are never
   * touched. The number of rows deleted.
   */
  async pruneFinished(retentionDays: number, batch = 5000): Promise<number> {
    let total = 0;
    for (const table of ['webhook_deliveries', 'webhook_attempts'] as const) {
      const finished = table === 'webhook_deliveries' ? `state <> 'pending' AND created` : 'attempted';
      for (;;) {
        const deleted = await this.sql.affected(
          `DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE ${finished} < now() - make_interval(days => $1) LIMIT $2)`,
          [retentionDays, batch],
        );
        total += deleted;
        if (deleted < batch) break;
      }
    }
    return total;
  }

  /** Deliveries still to be made, of every organization (the queue-depth metric; the partial due index counts them). */
  async pendingCount(): Promise<number> {
    return this.sql.value(COUNT, `SELECT count(*)::int AS count FROM webhook_deliveries WHERE state = 'pending'`);
  }

  /** The webhook's attempts; the organization is compared too, so on Citus the read goes to one shard. */
  async countAttempts(organizationId: string, webhookId: string): Promise<number> {
    return this.sql.value(COUNT, `SELECT count(*)::int AS count FROM webhook_attempts WHERE webhook_id = $1 AND organization_id = $2`, [webhookId, organizationId]);
  }

  /** Newest first. */
  pageAttempts(organizationId: string, webhookId: string, page: PageRequest): Promise<AttemptRow[]> {
    return this.sql.rows(
      ATTEMPT,
      `SELECT ${ATTEMPT_COLUMNS} FROM webhook_attempts a WHERE a.webhook_id = $1 AND a.organization_id = $4 ORDER BY a.attempted DESC, a.id DESC LIMIT $2 OFFSET $3`,
      [webhookId, page.size, page.offset, organizationId],
    );
  }

  /**
   * Claims up to `limit` due deliveries of enabled webhooks for one worker: the earliest of each webhook,
   * at most `perReceiver` per webhook less what the worker already has in flight to it (`inFlight`), so
   * one slow receiver cannot take every slot, and its backlog cannot hide the rows of others (each
   * webhook's due rows are read from its own range of webhook_deliveries_due_idx). Slots go round the
   * webhooks: every webhook's next row (counting what it has in flight) before any webhook's one after,
   * so many dead receivers with old backlogs hold the slots in turn with the live ones instead of ahead
   * of them. Rows other workers
   * hold are skipped (`SKIP LOCKED`), not waited for. A claimed row is made due again at the end of its
   * lease (`leaseMs`) and its attempt counted, in the same statement: a worker that dies mid-attempt
   * leaves a row another worker takes once the lease is over.
   */
  async claim(options: { limit: number; perReceiver: number; inFlight: Map<string, number>; leaseMs: number }): Promise<ClaimedDelivery[]> {
    return this.sql.rows(
      CLAIMED,
      `WITH due AS (
         SELECT d.id, d.next_attempt, coalesce(busy.in_flight, 0) + d.nth AS turn
           FROM webhooks w
           LEFT JOIN unnest($3::uuid[], $4::int[]) AS busy (webhook_id, in_flight) ON busy.webhook_id = w.id
           CROSS JOIN LATERAL (
             SELECT d.id, d.next_attempt, row_number() OVER (ORDER BY d.next_attempt) AS nth
               FROM (SELECT d.id, d.next_attempt FROM webhook_deliveries d
                      WHERE d.webhook_id = w.id AND d.state = 'pending' AND d.next_attempt <= now()
                      ORDER BY d.next_attempt
                      LIMIT greatest($2 - coalesce(busy.in_flight, 0), 0)) d) d
          WHERE w.enabled
       ), picked AS (
         SELECT d.id
           FROM webhook_deliveries d
           JOIN due ON due.id = d.id
          WHERE d.state = 'pending' AND d.next_attempt <= now()
          ORDER BY due.turn, due.next_attempt
          LIMIT $1
            FOR UPDATE OF d SKIP LOCKED
       )
       UPDATE webhook_deliveries d
          SET next_attempt = clock_timestamp() + $5 * interval '1 millisecond', attempts = d.attempts + 1
         FROM picked, webhooks w
        WHERE d.id = picked.id AND w.id = d.webhook_id
        RETURNING d.id, d.organization_id, d.webhook_id, d.kind, d.body, d.attempts, (extract(epoch FROM d.created) * 1000)::float8 AS queued_ms, w.url, w.secret_sealed,
                  ${previousSecret('w', 'previous_secret_sealed')} AS previous_secret_sealed`,
      [options.limit, options.perReceiver, [...options.inFlight.keys()], [...options.inFlight.values()], options.leaseMs],
    );
  }

  /**
   * Records an attempt and what it means for the delivery, in one statement. The delivery is changed only
   * while the claim is still this worker's (its attempt count unchanged): after an expired lease another
   * worker owns it.
   */
  async record(delivery: ClaimedDelivery, outcome: AttemptOutcome, attempted: Date, result: AttemptResult): Promise<void> {
    await this.sql.run(
      `WITH attempt AS (
         INSERT INTO webhook_attempts (organization_id, webhook_id, delivery_id, kind, attempt, status_code, error, duration_ms, attempted)
         SELECT $11, $1, $2, $3, $4, $5, $6, $7, $8 WHERE EXISTS (SELECT 1 FROM webhooks WHERE organization_id = $11 AND id = $1)
       )
       UPDATE webhook_deliveries SET state = $9, next_attempt = $10 WHERE id = $2 AND attempts = $4 AND state = 'pending'`,
      [
        delivery.webhook_id,
        delivery.id,
        delivery.kind,
        delivery.attempts,
        outcome.statusCode,
        outcome.error,
        outcome.durationMs,
        attempted,
        result.state,
        result.state === 'pending' ? result.nextAttempt : null,
        delivery.organization_id,
      ],
    );
  }

  /** Hands claims back unattempted (a worker stopping): due now, their attempt not counted. */
  async release(deliveries: ClaimedDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    await this.sql.run(
      `UPDATE webhook_deliveries d SET next_attempt = now(), attempts = d.attempts - 1
         FROM unnest($1::uuid[], $2::int[]) AS claimed (id, attempts)
        WHERE d.id = claimed.id AND d.attempts = claimed.attempts AND d.state = 'pending'`,
      [deliveries.map((delivery) => delivery.id), deliveries.map((delivery) => delivery.attempts)],
    );
  }
}
