import { DatabaseError, type Pool, type PoolClient, type QueryResult } from 'pg';
import { DataSource, QueryFailedError, type QueryRunner } from 'typeorm';

/** What a query that outlived its read timeout fails with (the error mapper answers 503). */
export const READ_TIMEOUT_MESSAGE = 'Query read timeout';

const bounded = new WeakSet<PoolClient>();

/**
 * How the service's queries reach the pg pool TypeORM owns. Two things, both about per-request cost
 * (issue 6, docs/PERFORMANCE.md):
 *
 * 1. Every pooled connection's `query(text, values)` is bounded by `readTimeoutMs` on the client side:
 *    a database that stops answering (frozen, packets dropped) cannot hold a request forever, and
 *    the server-side statement_timeout cannot fire then. The connection is destroyed (it is of no
 *    further use) and the query fails with "Query read timeout".
 *    This replaces pg's own `query_timeout` option and promise form, which the service used before:
 *    with either of them every result's rows survived V8's young-generation collections and were
 *    promoted (measured on the first list page: 0.7 MB promoted per scavenge against 30 kB, scavenges
 *    10× longer, several times the raw baseline's GC time). Issuing the query in pg's callback form
 *    and keeping our own timer, as here, lets results die young.
 *
 * 2. `dataSource.query(sql, params)` outside a transaction goes straight to the pool. TypeORM runs
 *    each such call through a fresh QueryRunner (pool checkout with error listeners, logger and
 *    subscriber broadcasts, a QueryResult object): on the twin detail route that was about a third of
 *    the service's overhead over plain `pg`. Same contract as TypeORM's PostgresQueryRunner.query: the
 *    rows (for UPDATE and DELETE `[rows, rowCount]`); a failed statement becomes a QueryFailedError
 *    wrapping the driver error; a failure to get a connection is thrown as it comes. Calls with a
 *    query runner (transactions, `manager.query` inside them) keep TypeORM's path, bounded by (1).
 */
export function installPooledQueries(dataSource: DataSource, readTimeoutMs: number): void {
  const pool = (dataSource.driver as unknown as { master?: Pool }).master;
  if (!pool || typeof pool.connect !== 'function') return;
  // 'acquire' is emitted on every checkout, TypeORM's own included, before the client is handed over.
  if (readTimeoutMs > 0) pool.on('acquire', (client) => boundQueries(client, readTimeoutMs));
  const viaTypeOrm = dataSource.query.bind(dataSource);

  const direct = async (query: string, parameters?: unknown[], queryRunner?: QueryRunner): Promise<unknown> => {
    if (queryRunner || (parameters !== undefined && !Array.isArray(parameters))) return viaTypeOrm(query, parameters, queryRunner);
    const client = await pool.connect();
    let result: QueryResult;
    // A connection that fails while checked out emits 'error'; without a listener that would crash the process.
    let broken: Error | undefined;
    const onError = (error: Error) => (broken = error);
    client.on('error', onError);
    try {
      result = await client.query(query, parameters);
    } catch (error) {
      release(client, onError, broken ?? (error instanceof DatabaseError ? undefined : (error as Error)));
      throw new QueryFailedError(query, parameters, error as Error);
    }
    release(client, onError, broken);
    switch (result.command) {
      case 'DELETE':
      case 'UPDATE':
        return [result.rows, result.rowCount];
      default:
        return result.rows;
    }
  };
  dataSource.query = direct as DataSource['query'];
}

/** Once per connection: its promise-form `query(text, values)` gets the read timeout (see above). */
function boundQueries(client: PoolClient, readTimeoutMs: number): void {
  if (bounded.has(client)) return;
  bounded.add(client);
  const original = client.query.bind(client) as (text: unknown, values?: unknown, callback?: unknown) => unknown;
  client.query = ((text: unknown, values?: unknown, callback?: unknown) => {
    // Callback forms, query objects (cursors, streams) and config objects keep pg's own behaviour.
    if (typeof text !== 'string' || typeof values === 'function' || callback !== undefined) return original(text, values, callback);
    return new Promise<QueryResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(READ_TIMEOUT_MESSAGE));
        (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      }, readTimeoutMs);
      original(text, values, (error: Error | null, result: QueryResult) => {
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(result);
      });
    });
  }) as PoolClient['query'];
}

/** Back to the pool; a connection that failed (not a statement the database refused) is discarded. */
function release(client: PoolClient, onError: (error: Error) => void, failure: Error | undefined): void {
  client.removeListener('error', onError);
  client.release(failure);
}
