import { Logger } from '@nestjs/common';
import { Webhook } from 'standardwebhooks';
import type { WebhooksConfig } from '../config/app-config.js';
import type { DatabaseNotifications } from '../database/notifications.js';
import { nextAttemptAt } from './backoff.js';
import type { SecretBox } from './secret-box.js';
import { isSuccess, type AttemptOutcome, WebhookSender } from './webhook-sender.js';
import type { AttemptResult, ClaimedDelivery, WebhooksRepository } from './webhooks.repository.js';

/** The NOTIFY channel of the outbox trigger (migration Webhooks). */
export const DELIVERIES_CHANNEL = 'webhook_deliveries';

/** How long a stopping worker waits for its attempts in flight before it aborts them. */
const STOP_GRACE_MS = 2000;

/** How often each worker deletes finished deliveries and attempts past WEBHOOKS_LOG_RETENTION_DAYS. */
const PRUNE_INTERVAL_MS = 10 * 60 * 1000;


/**
 * Delivers the outbox (docs/WEBHOOKS.md). Runs on every instance; instances share the rows through the
 * claim's `FOR UPDATE SKIP LOCKED` and its lease (webhooks.repository.ts), so each due row goes to one
 * worker and a dead worker's rows come back when their lease ends.
 *
 * Work is started by a wake-up: the trigger's NOTIFY (PostgreSQL), the poll timer (always, and the only
 * source on the embedded database, which cannot hold a listening session), a retry falling due (a timer
 * this worker set), or a slot freeing up. A wake-up claims as many rows as there are free slots and
 * starts each attempt on its own: attempts run outside any transaction, concurrently, each bounded by
 * the timeout, so a slow receiver holds its own slots (at most `perReceiver`) and nothing else.
 */
export class WebhookWorker {
  private running = false;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perWebhook = new Map<string, number>();
  private readonly stopping = new AbortController();
  private claiming: Promise<void> | undefined;
  private wakeAgain = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  private pruning: Promise<unknown> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryAt = Infinity;
  private readonly sender: WebhookSender;
  private readonly leaseMs: number;

  constructor(
    private readonly repository: WebhooksRepository,
    private readonly secrets: SecretBox,
    private readonly config: WebhooksConfig,
    private readonly notifications: DatabaseNotifications | null,
    private readonly logger = new Logger('Webhooks'),
    /** Told each attempt's outcome (the metrics). */
    private readonly observe: (outcome: 'delivered' | 'retry' | 'failed') => void = () => undefined,
  ) {
    this.sender = new WebhookSender({ timeoutMs: config.timeoutMs, allowPrivate: config.allowPrivate, connections: config.perReceiver });
    // Long enough that a live worker's attempt (bounded by the timeout) always ends inside its lease.
    this.leaseMs = config.timeoutMs + 30_000;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    if (this.notifications) {
      await this.notifications.subscribe(DELIVERIES_CHANNEL, this.wake).catch((error: Error) => {
        this.logger.warn(`no NOTIFY wake-ups for webhook deliveries (polling every ${this.config.pollMs} ms): ${error.message}`);
      });
    }
    this.pollTimer = setInterval(this.wake, this.config.pollMs);
    this.pollTimer.unref();
    this.pruneTimer = setInterval(() => {
      this.pruning ??= this.repository
        .pruneFinished(this.config.logRetentionDays)
        .catch((error: Error) => this.logger.warn(`pruning finished webhook deliveries failed: ${error.message}`))
        .finally(() => (this.pruning = undefined));
    }, PRUNE_INTERVAL_MS);
    this.pruneTimer.unref();
    this.wake();
  }

  /**
   * Stops claiming, lets the attempts in flight finish for up to STOP_GRACE_MS (an attempt cut short
   * after the receiver already had the request would be sent again by the next worker: a duplicate on
   * every rolling restart), then aborts the rest and hands their rows back, so another instance (or the
   * next start) sends them at once.
   */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearInterval(this.pollTimer);
    clearInterval(this.pruneTimer);
    clearTimeout(this.retryTimer);
    await this.pruning;
    await this.claiming?.catch(() => undefined);
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.inFlight.values()]), new Promise((resolve) => (grace = setTimeout(resolve, STOP_GRACE_MS)))]);
    clearTimeout(grace);
    this.stopping.abort();
    await Promise.allSettled([...this.inFlight.values()]);
    await this.sender.close();
  }

  /** Attempts in flight (tests, the bench). */
  get busy(): number {
    return this.inFlight.size;
  }

  readonly wake = (): void => {
    if (!this.running) return;
    if (this.claiming) {
      this.wakeAgain = true;
      return;
    }
    this.claiming = this.claimAndStart()
      .catch((error: Error) => this.logger.warn(`claiming webhook deliveries failed: ${error.message}`))
      .finally(() => {
        this.claiming = undefined;
        if (this.wakeAgain) {
          this.wakeAgain = false;
          this.wake();
        }
      });
  };

  private async claimAndStart(): Promise<void> {
    for (;;) {
      const free = this.config.concurrency - this.inFlight.size;
      if (!this.running || free <= 0) return;
      const claimed = await this.repository.claim({
        limit: free,
        perReceiver: this.config.perReceiver,
        inFlight: this.perWebhook,
        leaseMs: this.leaseMs,
      });
      if (!this.running) {
        await this.repository.release(claimed);
        return;
      }
      for (const delivery of claimed) this.launch(delivery);
      if (claimed.length < free) return;
    }
  }

  private launch(delivery: ClaimedDelivery): void {
    this.perWebhook.set(delivery.webhook_id, (this.perWebhook.get(delivery.webhook_id) ?? 0) + 1);
    const attempt = this.attempt(delivery)
      .catch((error: Error) => this.logger.warn(`webhook delivery ${delivery.id}: ${error.message}`))
      .finally(() => {
        this.inFlight.delete(delivery.id);
        const left = (this.perWebhook.get(delivery.webhook_id) ?? 1) - 1;
        if (left > 0) this.perWebhook.set(delivery.webhook_id, left);
        else this.perWebhook.delete(delivery.webhook_id);
        this.wake();
      });
    this.inFlight.set(delivery.id, attempt);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const attempted = new Date();
    const outcome = await this.send(delivery, attempted);
    if (this.stopping.signal.aborted && outcome.statusCode === null) {
      // Cut short by the shutdown, not by the receiver: not an attempt. It is sent again (at least once).
      await this.repository.release([delivery]);
      return;
    }
    const result = this.result(delivery, outcome);
    await this.repository.record(delivery, outcome, attempted, result);
    this.observe(result.state === 'pending' ? 'retry' : result.state);
    if (result.state === 'pending') this.wakeAt(result.nextAttempt.getTime());
  }

  private async send(delivery: ClaimedDelivery, attempted: Date): Promise<AttemptOutcome> {
    let signers: Webhook[];
    try {
      signers = [delivery.secret_sealed, delivery.previous_secret_sealed].filter((sealed) => sealed !== null).map((sealed) => new Webhook(this.secrets.open(sealed, delivery.webhook_id)));
    } catch {
      // A key other than the one that sealed the secret (WEBHOOKS_SECRET_KEY changed or removed).
      return { statusCode: null, error: 'the signing secret cannot be opened with the configured WEBHOOKS_SECRET_KEY', durationMs: 0 };
    }
    const timestamp = Math.floor(attempted.getTime() / 1000);
    const headers = {
      'webhook-id': delivery.id,
      'webhook-timestamp': String(timestamp),
      // During a rotation's overlap, one signature per secret, space-separated (Standard Webhooks): a
      // receiver verifying with either secret accepts the delivery.
      'webhook-signature': signers.map((signer) => signer.sign(delivery.id, new Date(timestamp * 1000), delivery.body)).join(' '),
    };
    return this.sender.send(delivery.url, headers, delivery.body, this.stopping.signal);
  }

  private result(delivery: ClaimedDelivery, outcome: AttemptOutcome): AttemptResult {
    if (isSuccess(outcome)) return { state: 'delivered' };
    const at = nextAttemptAt(delivery.queued_ms, Date.now(), delivery.attempts, {
      baseMs: this.config.retryBaseMs,
      maxDelayMs: this.config.retryMaxDelayMs,
      windowMs: this.config.retryWindowMs,
    });
    if (at === null) return { state: 'failed' };
    return { state: 'pending', nextAttempt: new Date(at) };
  }

  /** One timer, for the earliest retry this worker scheduled (the poll catches any other). */
  private wakeAt(at: number): void {
    if (at >= this.retryAt) return;
    clearTimeout(this.retryTimer);
    this.retryAt = at;
    this.retryTimer = setTimeout(() => {
      this.retryAt = Infinity;
      this.wake();
    }, Math.max(0, at - Date.now()) + 1);
    this.retryTimer.unref();
  }
}
