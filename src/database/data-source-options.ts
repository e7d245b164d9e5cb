import type { DataSourceOptions } from 'typeorm';
import { ConnectBoundedClient } from './connect-bounded-client.js';
import { migrations } from '../../db/migrations/index.js';
import { tables } from './schema/index.js';

/**
 * The client-side bound on a query (pooled-queries.ts) for a database that stops answering, where the
 * server-side timeout cannot fire: the statement timeout plus a second; 0 (migrations) turns both off.
 */
export const readTimeoutMs = (statementTimeoutMs: number): number => (statementTimeoutMs > 0 ? statementTimeoutMs + 1000 : 0);

/** How long a request waits for a free pool connection before it is answered 503 `database_busy` (DATABASE_POOL_WAIT_MS). */
export const DEFAULT_POOL_WAIT_MS = 2_000;

/**
 * The single description of how the service talks to PostgreSQL, used by the app, the CLI, the
 * migration command and the tests. `synchronize` is never on: migrations own the schema.
 */
export function dataSourceOptions(url: string, poolSize: number, statementTimeoutMs: number, poolWaitMs = DEFAULT_POOL_WAIT_MS): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: tables.map((table) => table.entity),
    migrations,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    migrationsRun: false,
    installExtensions: false,
    uuidExtension: 'pgcrypto',
    // Failures are logged once, structured, by the error filter; TypeORM's console logger would print parameters.
    logging: false,
    extra: {
      max: poolSize,
      // The wait for a free connection has a bound of its own: long enough for a legitimate burst (fifty
      // clients on a pool of ten, map pages of 100 ms and more, queue past a second), short enough that a
      // client hears 503 `database_busy` long before its own timeout. Opening a connection is bounded
      // apart, by a second (ConnectBoundedClient), so a database that is down answers 503 at once. The
      // embedded database queues every statement on its one local connection: its wait is the statement
      // timeout's, as is the migrations' (0: none).
      connectionTimeoutMillis: poolSize > 1 ? poolWaitMs : statementTimeoutMs,
      ...(poolSize > 1 ? { Client: ConnectBoundedClient } : {}),
      idleTimeoutMillis: poolSize === 1 ? 0 : 30_000,
      application_name: 'twin-service',
      // 0 turns the timeout off (migrations: CREATE EXTENSION postgis alone can take longer). No JIT:
      // every statement here is short, and compiling one costs more than it saves (0.3-0.6 s on a
      // low-zoom vector tile, docs/PERFORMANCE.md).
      options: `-c TimeZone=UTC -c statement_timeout=${statementTimeoutMs} -c jit=off`,
    },
  };
}
