import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Sql } from '../database/sql.js';
import { TilesRepository } from './tiles.repository.js';

/** How often an instance folds (each tries; the lock lets one at a time, the others skip that round). */
const FOLD_INTERVAL_MS = 1000;
/** Shard rows per fold transaction: a writer touching one of them waits for that transaction, so it stays short. */
const FOLD_BATCH = 1000;
/**
 * Batches per round at most: under a heavy stream of moves the fold takes a bounded share of the
 * database and the next round goes on where this one stopped. Rows waiting longer only gather more
 * moves of their writer (two rows per writer and cell at most), so they do not grow without bound.
 */
const ROUND_BATCHES = 20;
/** Where a pass over the shards starts: below every shard (backend pids are positive). */
const FIRST_SHARD = -2147483648;

/**
 * Keeps the cluster grid folded (migration TileGridShards): the writers add their deltas to rows of
 * their own shard, so concurrent moves never wait for each other; every second, off the request path,
 * this adds those rows into shard 0, a bounded batch per transaction, so the tiles read few rows per
 * cell. Reads are exact whether a delta is folded or not; the fold keeps them fast. The rounds take
 * the rows of the past second's parity only, which the writers have left, so a writer seldom waits
 * for the fold; they go through the shards in order, each round on from where the last one stopped.
 */
@Injectable()
export class TileGridFold implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('TileGridFold');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopping = false;
  /** The shard the next batch starts from. */
  private from = FIRST_SHARD;

  constructor(
    private readonly sql: Sql,
    private readonly tiles: TilesRepository,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.round()
        .catch((error: Error) => this.logger.warn(`folding the tile grid failed: ${error.message}`))
        .finally(() => (this.running = undefined));
    }, FOLD_INTERVAL_MS);
    this.timer.unref();
  }

  /** Before the database closes (DatabaseModule's shutdown), the round under way ends. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  /** No more rounds; resolves once the one under way has ended. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.running;
  }

  /**
   * One transaction: folds up to `batch` shard rows from where the last batch stopped (`settledOnly`:
   * only rows the writers have left, see TilesRepository.foldShards); the number folded, undefined
   * when another instance folds. A batch that is not full ends a pass.
   */
  async foldBatch(batch = FOLD_BATCH, settledOnly = false): Promise<number | undefined> {
    const result = await this.sql.transaction(async () =>
      (await this.tiles.takeFoldLock()) ? this.tiles.foldShards(batch, this.from, settledOnly) : undefined,
    );
    if (result === undefined) return undefined;
    this.from = result.folded < batch ? FIRST_SHARD : result.last;
    return result.folded;
  }

  /** Folds until a whole pass over the shards is done (rows a running writer holds stay); the number of shard rows folded. */
  async foldAll(): Promise<number> {
    let total = 0;
    for (;;) {
      const fromFirst = this.from === FIRST_SHARD;
      const folded = await this.foldBatch();
      if (folded === undefined) return total;
      total += folded;
      if (folded < FOLD_BATCH && fromFirst) return total;
    }
  }

  /** A timer's round: up to ROUND_BATCHES batches, to the end of the pass, or to the stop. */
  private async round(): Promise<void> {
    for (let i = 0; i < ROUND_BATCHES && !this.stopping; i++) {
      const folded = await this.foldBatch(FOLD_BATCH, true);
      if (folded === undefined || folded < FOLD_BATCH) return;
    }
  }
}
