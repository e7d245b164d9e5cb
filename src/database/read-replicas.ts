import { Logger } from '@nestjs/common';
import { DatabaseError, Pool } from 'pg';
import { QueryFailedError } from 'typeorm';
import { ConnectBoundedClient } from './connect-bounded-client.js';
import { DEFAULT_POOL_WAIT_MS } from './data-source-options.js';
import { installOnPool, type PooledQueryOptions } from './pooled-queries.js';

/** How long a replica that failed is left out before a query tries it again. */
export const REPLICA_RETRY_AFTER_MS = 5_000;

interface Replica {
  readonly name: string;
  readonly pool: Pool;
  readonly query: (text: string, parameters?: unknown[]) => Promise<unknown>;
  downUntil: number;
  queries: number;
  failures: number;
}

export interface ReplicaStats {
  name: string;
  queries: number;
  failures: number;
  down: boolean;
}

/**
 * PostgreSQL streaming replicas (`DATABASE_REPLICA_URLS`) for the reads that tolerate lag. Each has
 * its own pg pool with the primary's settings and the same pooled-query mechanism (read timeout,
 * prepared statements: pooled-queries.ts). Reads go round-robin to the replicas that are up; a replica
 * that cannot serve (unreachable, starting, shutting down, read timeout) is left out for
 * REPLICA_RETRY_AFTER_MS and the read is answered by `primary` instead, so a lost replica costs at most
 * one failed attempt per replica and interval, never an error. Pools connect lazily: a replica that is
 * down at boot does not stop the service.
 */
export class ReadReplicas {
  private next = 0;
  private readonly logger = new Logger('ReadReplicas');

  private constructor(private readonly replicas: Replica[]) {}

  static open(urls: string[], settings: { poolSize: number; statementTimeoutMs: number; poolWaitMs?: number } & PooledQueryOptions): ReadReplicas | undefined {
    if (urls.length === 0) return undefined;
    return new ReadReplicas(
      urls.map((url, index) => {
        const pool = new Pool({
          connectionString: url,
          max: settings.poolSize,
          // As on the primary (data-source-options.ts): a replica that is down fails its connection
          // within a second, so the fallback is quick; a busy one is waited for, as long as the primary's pool.
          connectionTimeoutMillis: settings.poolWaitMs ?? DEFAULT_POOL_WAIT_MS,
          Client: ConnectBoundedClient,
          idleTimeoutMillis: 30_000,
          application_name: 'twin-service replica',
          options: `-c TimeZone=UTC -c statement_timeout=${settings.statementTimeoutMs} -c jit=off`,
        });
        // An idle connection that breaks (replica restarted) emits 'error' on the pool; unheard, it would end the process.
        pool.on('error', () => undefined);
        return { name: `replica ${index + 1}`, pool, query: installOnPool(pool, settings), downUntil: 0, queries: 0, failures: 0 };
      }),
    );
  }

  /** Runs one read on a replica that is up, or on `primary` when none is or the chosen one cannot serve it. */
  async query(text: string, parameters: unknown[] | undefined, primary: () => Promise<unknown>): Promise<unknown> {
    const replica = this.pick();
    if (!replica) return primary();
    replica.queries++;
    try {
      return await replica.query(text, parameters);
    } catch (error) {
      const cause = error instanceof QueryFailedError ? (error.driverError as unknown) : error;
      if (!unavailable(cause)) throw error;
      replica.failures++;
      // A recovery conflict cancels one statement; the replica itself is fine.
      if (!recoveryConflict(cause)) {
        if (replica.downUntil <= Date.now()) this.logger.warn(`${replica.name} unavailable (${(cause as Error).message}); reads go to the primary for ${REPLICA_RETRY_AFTER_MS} ms`);
        replica.downUntil = Date.now() + REPLICA_RETRY_AFTER_MS;
      }
      return primary();
    }
  }

  stats(): ReplicaStats[] {
    const now = Date.now();
    return this.replicas.map(({ name, queries, failures, downUntil }) => ({ name, queries, failures, down: downUntil > now }));
  }

  /** Each replica's pool, as `Database.poolStats` gives the primary's (for the metrics). */
  poolStats(): { total: number; idle: number; waiting: number }[] {
    return this.replicas.map(({ pool }) => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }));
  }

  async close(): Promise<void> {
    await Promise.all(this.replicas.map((replica) => replica.pool.end().catch(() => undefined)));
  }

  private pick(): Replica | undefined {
    const now = Date.now();
    for (let tried = 0; tried < this.replicas.length; tried++) {
      const replica = this.replicas[this.next++ % this.replicas.length];
      if (replica.downUntil <= now) return replica;
    }
    return undefined;
  }
}

/**
 * Failures that say the replica cannot serve reads now rather than that the statement is wrong (which
 * the primary would refuse too): no answer at all (refused, reset, timed out, read timeout), connection
 * exceptions (class 08), shutdown and start-up (57P01–57P03), too many connections (53300), and
 * recovery conflicts (40001, a replay cancelling the statement).
 */
function unavailable(error: unknown): boolean {
  if (!(error instanceof DatabaseError)) return true;
  const code = error.code ?? '';
  return code.startsWith('08') || ['57P01', '57P02', '57P03', '53300', '40001'].includes(code);
}

function recoveryConflict(error: unknown): boolean {
  return error instanceof DatabaseError && error.code === '40001';
}
