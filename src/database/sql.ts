import { AsyncLocalStorage } from 'node:async_hooks';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { IsolationLevel } from 'typeorm/driver/types/IsolationLevel.js';
import { ReadReplicas } from './read-replicas.js';
import { watchColumns } from './pooled-queries.js';
import { checkColumns, isChecked, type RowShape } from './row-shape.js';

/** The open transaction of the async context: its connection, and what is to happen once it committed. */
interface OpenTransaction {
  manager: EntityManager;
  afterCommit: (() => void)[];
}

/**
 * How repositories run SQL, and the one way to make several statements one transaction.
 *
 * `transaction(work)` opens a transaction and runs `work` inside it; every `query()` made while `work`
 * runs — by any repository, however deep the call — goes to that transaction's connection, found
 * through the async context, not passed by hand. A call that forgets to take part cannot exist: there
 * is no argument to forget. That matters twice over: a statement outside the transaction would lose
 * atomicity on PostgreSQL, and would wait forever on the embedded database, which has one connection
 * (held by the transaction). Outside a transaction, `query()` goes straight to the pool
 * (pooled-queries.ts). A transaction opened inside another joins it (one commit, one rollback).
 */
@Injectable()
export class Sql {
  private readonly current = new AsyncLocalStorage<OpenTransaction>();

  constructor(
    private readonly dataSource: DataSource,
    @Optional() @Inject(ReadReplicas) private readonly replicas: ReadReplicas | null = null,
  ) {}

  /**
   * Runs one statement and answers what TypeORM answers: the rows (for UPDATE and DELETE `[rows, affected
   * count]`), untyped. Repositories read through the typed forms below, which say what the rows are.
   */
  query(text: string, parameters?: unknown[]): Promise<unknown> {
    const open = this.current.getStore();
    return open ? open.manager.query(text, parameters) : this.dataSource.query(text, parameters);
  }

  /**
   * A read that may be answered from a streaming replica (DATABASE_REPLICA_URLS), seconds behind the
   * primary: tiles, the geo listing, the quest feed. Never for a read that must see a write the caller
   * (or anyone it answered) just made — a twin read back after its PATCH, an idempotency key, a
   * permission check — those use `rows()` and its kin. Inside a transaction it runs on the transaction's connection
   * like any other statement (the transaction's own writes and snapshot win); without replicas, or
   * when none can serve, it goes to the primary.
   */
  replicaQuery(text: string, parameters?: unknown[]): Promise<unknown> {
    if (this.current.getStore() || !this.replicas) return this.query(text, parameters);
    return this.replicas.query(text, parameters, () => this.dataSource.query(text, parameters));
  }

  /**
   * The rows of a statement (SELECT, INSERT … RETURNING, UPDATE … RETURNING), typed by `shape`, whose
   * columns are compared with the statement's once per text (row-shape.ts).
   */
  rows<R>(shape: RowShape<R>, text: string, parameters?: unknown[]): Promise<R[]> {
    return this.read(shape, text, parameters, false);
  }

  /** `rows()` from a replica where one can serve (see `replicaQuery`). */
  replicaRows<R>(shape: RowShape<R>, text: string, parameters?: unknown[]): Promise<R[]> {
    return this.read(shape, text, parameters, true);
  }

  /** The first row of a statement (typed and checked as by `rows()`), undefined when it answers none. */
  async first<R>(shape: RowShape<R>, text: string, parameters?: unknown[]): Promise<R | undefined> {
    return (await this.read(shape, text, parameters, false))[0];
  }

  /** The row of a statement that always answers one (an aggregate, a page's one row). */
  async one<R>(shape: RowShape<R>, text: string, parameters?: unknown[]): Promise<R> {
    return oneOf(await this.read(shape, text, parameters, false), text);
  }

  /** `one()` from a replica where one can serve (see `replicaQuery`). */
  async replicaOne<R>(shape: RowShape<R>, text: string, parameters?: unknown[]): Promise<R> {
    return oneOf(await this.read(shape, text, parameters, true), text);
  }

  /** The one column of a statement that always answers one row (an aggregate: a count, a sum). */
  async value<V>(shape: RowShape<Record<string, V>>, text: string, parameters?: unknown[]): Promise<V> {
    return (await this.one(shape, text, parameters))[shape.columns[0]];
  }

  /** Whether a statement answers any row (`SELECT 1 … WHERE …`): its columns say nothing. */
  async exists(text: string, parameters?: unknown[]): Promise<boolean> {
    return rowsOf(await this.query(text, parameters)).length > 0;
  }

  /** How many rows an UPDATE or DELETE changed (without RETURNING). */
  async affected(text: string, parameters?: unknown[]): Promise<number> {
    const answer = await this.query(text, parameters);
    if (!isChangedAnswer(answer)) throw new Error(`Not an UPDATE or DELETE, no affected count: ${text.slice(0, 200)}`);
    return answer[1];
  }

  /** Runs a statement whose answer nobody reads (SET, INSERT without RETURNING, …). */
  async run(text: string, parameters?: unknown[]): Promise<void> {
    await this.query(text, parameters);
  }

  private async read<R>(shape: RowShape<R>, text: string, parameters: unknown[] | undefined, lagTolerant: boolean): Promise<R[]> {
    const ask = () => (lagTolerant ? this.replicaQuery(text, parameters) : this.query(text, parameters));
    if (isChecked(text)) return rowsOf(await ask()) as R[];
    // Pooled answers tell their columns (pooled-queries.ts); inside a transaction TypeORM hands over only
    // rows, so the first row's keys stand in, and a text answering no rows is checked on a later call.
    let columns: readonly string[] | undefined;
    if (!this.current.getStore()) watchColumns(text, (answered) => (columns = answered));
    const rows = rowsOf(await ask());
    columns ??= rows.length > 0 ? Object.keys(rows[0] as object) : undefined;
    if (columns) checkColumns(shape, text, columns);
    return rows as R[];
  }

  /** Runs `work` in a transaction (or in the one already open): committed when it resolves, rolled back when it throws. */
  async transaction<T>(work: () => Promise<T>, isolation?: IsolationLevel): Promise<T> {
    if (this.current.getStore()) return work();
    const afterCommit: (() => void)[] = [];
    const run = (manager: EntityManager) => this.current.run({ manager, afterCommit }, work);
    const result = await (isolation ? this.dataSource.transaction(isolation, run) : this.dataSource.transaction(run));
    for (const effect of afterCommit) effect();
    return result;
  }

  /**
   * Runs `effect` once the caller's transaction committed (at once outside a transaction), never when it
   * rolls back: announcing a change that may still be undone would tell the world something false.
   */
  afterCommit(effect: () => void): void {
    const open = this.current.getStore();
    if (open) open.afterCommit.push(effect);
    else effect();
  }

  /** Whether the caller runs inside a transaction (for assertions in code that must). */
  get inTransaction(): boolean {
    return this.current.getStore() !== undefined;
  }
}

/** UPDATE and DELETE answer `[rows, affected count]` (TypeORM's contract, kept by pooled-queries.ts). */
const isChangedAnswer = (answer: unknown): answer is [unknown[], number] =>
  Array.isArray(answer) && answer.length === 2 && Array.isArray(answer[0]) && typeof answer[1] === 'number';

const oneOf = <R>(rows: R[], text: string): R => {
  if (rows.length === 0) throw new Error(`No row where one was certain: ${text.slice(0, 200)}`);
  return rows[0];
};

/** The rows of an answer, whichever statement gave it (a row is an object, never an array). */
const rowsOf = (answer: unknown): unknown[] => (isChangedAnswer(answer) ? answer[0] : (answer as unknown[]));
