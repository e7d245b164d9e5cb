import { createHash } from 'node:crypto';
import { DatabaseError, Query, type Pool, type PoolClient, type QueryResult } from 'pg';
import { DataSource, QueryFailedError, type QueryRunner } from 'typeorm';
import { NOT_ANSWERING_MESSAGE, type DatabaseLiveness, type InFlightStatement } from './liveness.js';

/** What a query that outlived its read timeout fails with (the error mapper answers 503). */
export const READ_TIMEOUT_MESSAGE = 'Query read timeout';

const bounded = new WeakSet<PoolClient>();

export interface PooledQueryOptions {
  /** Client-side bound on each query (see below); 0 turns it off. */
  readTimeoutMs: number;
  /** Run parameterised statements as named prepared statements (see `statementName`). */
  preparedStatements: boolean;
  /** The watch that notices a frozen database (liveness.ts): told of every statement, and refusing work while frozen. */
  liveness?: DatabaseLiveness;
}

const ONE_OFF = '/* one-off */ ';

/**
 * A statement whose text the client shapes (a compiled CQL2 filter of the OGC API: unboundedly many
 * texts) runs unnamed: planned each time, and never taking one of the names the service's own texts need.
 */
export const oneOffSql = (text: string): string => `${ONE_OFF}${text}`;

/** How many distinct SQL texts get a prepared statement; beyond that they run unnamed (PostgreSQL keeps each per connection). */
export const MAX_PREPARED_STATEMENTS = 500;
const statementNames = new Map<string, string>();

/**
 * The name of the prepared statement for a SQL text: a digest of the text, so the same text gets the
 * same name on every connection and in every process, whoever wrote it (a repository's constant, a
 * compiled filter, a query builder's output). undefined once MAX_PREPARED_STATEMENTS texts are named.
 */
export function statementName(text: string): string | undefined {
  if (text.startsWith(ONE_OFF)) return undefined;
  let name = statementNames.get(text);
  if (name === undefined && statementNames.size < MAX_PREPARED_STATEMENTS) {
    name = `s_${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * How the service's queries reach the pg pool TypeORM owns. Three things, all about per-request cost
 * (docs/PERFORMANCE.md):
 *
 * 1. Every pooled connection's `query(text, values)` is bounded by `readTimeoutMs` on the client side:
 *    a database that stops answering (frozen, packets dropped) cannot hold a request forever, and
 *    the server-side statement_timeout cannot fire then. The connection is destroyed (it is of no
 *    further use) and the query fails with "Query read timeout".
 *    This replaces pg's own `query_timeout` option and promise form, which the service used before:
 *    with either of them every result's rows survived V8's young-generation collections and were
 *    promoted, and scavenges took several times the hand-written server's GC time (docs/PERFORMANCE.md).
 *    Issuing the query in pg's callback form
 *    and keeping our own timer, as here, lets results die young.
 *
 * 2. `dataSource.query(sql, params)` outside a transaction goes straight to the pool. TypeORM runs
 *    each such call through a fresh QueryRunner (pool checkout with error listeners, logger and
 *    subscriber broadcasts, a QueryResult object): on the twin detail route that was about a third of
 *    the service's overhead over plain `pg`. Same contract as TypeORM's PostgresQueryRunner.query: the
 *    rows (for UPDATE and DELETE `[rows, rowCount]`); a failed statement becomes a QueryFailedError
 *    wrapping the driver error; a failure to get a connection is thrown as it comes. Calls with a
 *    query runner (transactions, `manager.query` inside them) keep TypeORM's path, bounded by (1).
 *
 * 3. With `preparedStatements`, every statement with parameters — through either path — is a named
 *    prepared statement (`statementName`): PostgreSQL parses and plans it once per connection instead
 *    of on every request. Statements without parameters (BEGIN, COMMIT, SET) stay unnamed. The
 *    embedded database turns this off: PGlite is one session shared by every socket connection, so a
 *    statement prepared by a closed connection would still exist under its name for the next one.
 *
 * 4. With `liveness`, every statement reports its start and answer to the watch that notices a frozen
 *    database (liveness.ts); while it is frozen, statements and pool checkouts fail at once.
 */
export function installPooledQueries(dataSource: DataSource, options: PooledQueryOptions): void {
  const pool = (dataSource.driver as unknown as { master?: Pool }).master;
  if (!pool || typeof pool.connect !== 'function') return;
  // 'acquire' is emitted on every checkout, TypeORM's own included, before the client is handed over.
  if (options.readTimeoutMs > 0 || options.preparedStatements || options.liveness) pool.on('acquire', (client) => wrapQueries(client, options));
  if (options.liveness) refuseCheckoutsWhileFrozen(pool, options.liveness);
  const viaTypeOrm = dataSource.query.bind(dataSource);
  const pooled = pooledQuery(pool);
  const direct = (query: string, parameters?: unknown[], queryRunner?: QueryRunner): Promise<unknown> =>
    queryRunner || (parameters !== undefined && !Array.isArray(parameters)) ? viaTypeOrm(query, parameters, queryRunner) : pooled(query, parameters);
  dataSource.query = direct as DataSource['query'];
}

/**
 * A pool of our own (a read replica's) gets the same treatment as TypeORM's: read timeout and statement
 * names on every checkout, and the query function below.
 */
export function installOnPool(pool: Pool, options: PooledQueryOptions): (query: string, parameters?: unknown[]) => Promise<unknown> {
  if (options.readTimeoutMs > 0 || options.preparedStatements) pool.on('acquire', (client) => wrapQueries(client, options));
  return pooledQuery(pool);
}

/**
 * Who waits for the column names of a text's next pooled answer (Sql.rows checks a statement's columns
 * once, and TypeORM's contract below hands over only rows). Empty once every text was checked, so an
 * answer costs one size test.
 */
const columnWatchers = new Map<string, (columns: readonly string[]) => void>();

/** Has `watch` told the column names of the next pooled answer to `text` (once). */
export function watchColumns(text: string, watch: (columns: readonly string[]) => void): void {
  columnWatchers.set(text, watch);
}

/** One statement on a pooled connection, with TypeORM's contract (see 2. above). */
function pooledQuery(pool: Pool): (query: string, parameters?: unknown[]) => Promise<unknown> {
  return async (query, parameters) => {
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
    if (columnWatchers.size !== 0 && result.fields) {
      const watch = columnWatchers.get(query);
      if (watch) {
        columnWatchers.delete(query);
        watch(result.fields.map((field) => field.name));
      }
    }
    switch (result.command) {
      case 'DELETE':
      case 'UPDATE':
        return [result.rows, result.rowCount];
      default:
        return result.rows;
    }
  };
}

/**
 * While the database is frozen a checkout fails at once instead of queueing for DATABASE_POOL_WAIT_MS
 * behind connections that will not come back. Both of pg-pool's forms: TypeORM's callback, our promise.
 */
function refuseCheckoutsWhileFrozen(pool: Pool, liveness: DatabaseLiveness): void {
  const connect = pool.connect.bind(pool) as (callback?: (error: Error | undefined, client?: PoolClient, done?: () => void) => void) => Promise<PoolClient> | void;
  pool.connect = ((callback?: (error: Error | undefined, client?: PoolClient, done?: () => void) => void) => {
    if (!liveness.frozen) return connect(callback);
    const error = new Error(NOT_ANSWERING_MESSAGE);
    if (!callback) return Promise.reject(error);
    process.nextTick(() => callback(error, undefined, () => undefined));
  }) as Pool['connect'];
}

const destroyConnection = (client: PoolClient): void =>
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();

/** Once per connection: its promise-form `query(text, values)` gets the read timeout, a statement name and the liveness watch (see above). */
function wrapQueries(client: PoolClient, { readTimeoutMs, preparedStatements, liveness }: PooledQueryOptions): void {
  if (bounded.has(client)) return;
  bounded.add(client);
  const original = client.query.bind(client) as (text: unknown, values?: unknown, callback?: unknown) => unknown;
  client.query = ((text: unknown, values?: unknown, callback?: unknown) => {
    // Callback forms, query objects (cursors, streams) and config objects keep pg's own behaviour.
    if (typeof text !== 'string' || typeof values === 'function' || callback !== undefined) return original(text, values, callback);
    if (liveness?.frozen) {
      destroyConnection(client);
      return Promise.reject(new Error(NOT_ANSWERING_MESSAGE));
    }
    return new Promise<QueryResult>((resolve, reject) => {
      const inFlight: InFlightStatement | undefined = liveness && {
        fail(error) {
          clearTimeout(timer);
          reject(error);
          destroyConnection(client);
        },
      };
      // pg's Query made from the text, then named: given a config object (`{ name, text }`), pg first
      // copies it through its property descriptors, which was 1–2 % of the service's CPU on small answers.
      const query = new Query(text, values as unknown[] | undefined, (error: Error | undefined, result: QueryResult) => {
        clearTimeout(timer);
        if (inFlight) liveness!.settled(inFlight, !error || error instanceof DatabaseError);
        if (error) reject(error);
        else resolve(result);
      });
      // `name` is what pg's Query reads to prepare (query.js), absent from its type declarations.
      if (preparedStatements && Array.isArray(values) && values.length > 0) (query as Query & { name?: string }).name = statementName(text);
      const timer =
        readTimeoutMs > 0
          ? setTimeout(() => {
              if (inFlight) liveness!.settled(inFlight, false);
              reject(new Error(READ_TIMEOUT_MESSAGE));
              destroyConnection(client);
            }, readTimeoutMs)
          : undefined;
      if (inFlight) liveness!.started(inFlight);
      original(query);
    });
  }) as PoolClient['query'];
}

/** Back to the pool; a connection that failed (not a statement the database refused) is discarded. */
function release(client: PoolClient, onError: (error: Error) => void, failure: Error | undefined): void {
  client.removeListener('error', onError);
  client.release(failure);
}
