import { Logger } from '@nestjs/common';
import { Client, DatabaseError } from 'pg';
import { CONNECT_TIMEOUT_MS } from './connect-bounded-client.js';

/** What statements fail with once PostgreSQL is known to have stopped answering (the error mapper answers 503). */
export const NOT_ANSWERING_MESSAGE = 'Database not answering';

/** No answer to any statement in flight for this long starts a probe. */
export const STALL_MS = 2_000;
/** How often the watch looks (and, while the database is frozen, how often it probes). */
const CHECK_EVERY_MS = 250;

/** A statement in flight on a watched connection: how to end it when the database is declared frozen. */
export interface InFlightStatement {
  fail(error: Error): void;
}

/**
 * Notices a PostgreSQL that stopped answering (SIGSTOP, a VM paused, packets dropped) in about three
 * seconds instead of a statement timeout, and refuses new work at once until it answers again
 * (decisions, "Bounded waits": every request answered within the statement timeout plus 2 s).
 *
 * Every statement on a pooled connection reports its start and its answer here. When statements are
 * in flight and none has been answered for STALL_MS, a busy database and a frozen one look alike —
 * a long tile query holds its connection just as a stopped server does — so the watch asks: a new
 * connection of its own and `SELECT 1`, bounded by CONNECT_TIMEOUT_MS each. An answer of any kind
 * (rows, or an error PostgreSQL sent, say too many connections) means the server runs: nothing
 * changes. No answer means frozen: every statement in flight fails (its connection is destroyed, so a
 * transaction not yet committed rolls back when the server reads again), new statements and pool
 * checkouts fail at once, and a probe runs every CHECK_EVERY_MS until one is answered.
 */
export class DatabaseLiveness {
  private readonly inFlight = new Set<InFlightStatement>();
  private lastAnswerAt = 0;
  private frozenSince: number | undefined;
  private probing = false;
  private readonly timer: NodeJS.Timeout;
  private readonly logger = new Logger('Database');

  constructor(
    private readonly url: string,
    private readonly stallMs = STALL_MS,
  ) {
    this.timer = setInterval(() => this.check(), CHECK_EVERY_MS).unref();
  }

  /** True from a failed probe until one is answered. */
  get frozen(): boolean {
    return this.frozenSince !== undefined;
  }

  started(statement: InFlightStatement): void {
    // A stall is measured from the last answer or from when statements started waiting, whichever is later.
    if (this.inFlight.size === 0) this.lastAnswerAt = Date.now();
    this.inFlight.add(statement);
  }

  /** `answered`: the server replied (rows or its own error), as opposed to a client-side timeout or a broken socket. */
  settled(statement: InFlightStatement, answered: boolean): void {
    this.inFlight.delete(statement);
    if (answered) this.lastAnswerAt = Date.now();
  }

  close(): void {
    clearInterval(this.timer);
  }

  private check(): void {
    if (this.probing) return;
    if (this.frozen || (this.inFlight.size > 0 && Date.now() - this.lastAnswerAt >= this.stallMs)) void this.probe();
  }

  private async probe(): Promise<void> {
    this.probing = true;
    try {
      const answered = await answersProbe(this.url);
      if (answered) {
        this.lastAnswerAt = Date.now();
        if (this.frozenSince !== undefined) {
          this.logger.warn(`database: answering again after ${Date.now() - this.frozenSince} ms`);
          this.frozenSince = undefined;
        }
        return;
      }
      if (this.frozenSince === undefined) {
        this.frozenSince = Date.now();
        this.logger.error(`database: no answer for ${this.stallMs} ms with ${this.inFlight.size} statement(s) in flight, and none to a probe; refusing new statements until it answers`);
      }
      const stranded = [...this.inFlight];
      this.inFlight.clear();
      for (const statement of stranded) statement.fail(new Error(NOT_ANSWERING_MESSAGE));
    } finally {
      this.probing = false;
    }
  }
}

/** Whether PostgreSQL answers a new connection's `SELECT 1` (or refuses it itself) within CONNECT_TIMEOUT_MS a step. */
async function answersProbe(url: string): Promise<boolean> {
  const client = new Client({
    connectionString: url,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: CONNECT_TIMEOUT_MS,
    application_name: 'twin-service liveness probe',
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    void client.end().catch(() => undefined);
    return true;
  } catch (error) {
    // end() would wait for a server that may not read; the socket is simply dropped.
    (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    return error instanceof DatabaseError;
  }
}
