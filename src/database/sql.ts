import { AsyncLocalStorage } from 'node:async_hooks';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { IsolationLevel } from 'typeorm/driver/types/IsolationLevel.js';
import { ReadReplicas } from './read-replicas.js';

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
   * Runs one statement: the rows (for UPDATE and DELETE `[rows, affected count]`, as TypeORM answers).
   * `T` is the caller's description of the rows (the schema's `Row<table>` types are meant for it); by
   * default the annotation of the variable receiving them states it, as with TypeORM's own query().
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query<T = any>(text: string, parameters?: unknown[]): Promise<T> {
    const open = this.current.getStore();
    return (open ? open.manager.query(text, parameters) : this.dataSource.query(text, parameters)) as Promise<T>;
  }

  /**
   * A read that may be answered from a streaming replica (DATABASE_REPLICA_URLS), seconds behind the
   * primary: tiles, the geo listing, the quest feed. Never for a read that must see a write the caller
   * (or anyone it answered) just made — a twin read back after its PATCH, an idempotency key, a
   * permission check — those use `query()`. Inside a transaction it runs on the transaction's connection
   * like any other statement (the transaction's own writes and snapshot win); without replicas, or
   * when none can serve, it goes to the primary.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  replicaQuery<T = any>(text: string, parameters?: unknown[]): Promise<T> {
    if (this.current.getStore() || !this.replicas) return this.query<T>(text, parameters);
    return this.replicas.query(text, parameters, () => this.dataSource.query(text, parameters)) as Promise<T>;
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
