import type { DataSourceOptions } from 'typeorm';
import { migrations } from '../../db/migrations/index.js';
import { tables } from './schema/index.js';

/**
 * The client-side bound on a query (pooled-queries.ts) for a database that stops answering, where the
 * server-side timeout cannot fire: the statement timeout plus a second; 0 (migrations) turns both off.
 */
export const readTimeoutMs = (statementTimeoutMs: number): number => (statementTimeoutMs > 0 ? statementTimeoutMs + 1000 : 0);

/**
 * The single description of how the service talks to PostgreSQL, used by the app, the CLI, the
 * migration command and the tests. `synchronize` is never on: migrations own the schema.
 */
export function dataSourceOptions(url: string, poolSize: number, statementTimeoutMs: number): DataSourceOptions {
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
      // A pooled connection that sat idle is kept; failing fast when the database is down makes
      // requests answer 503 within a second instead of hanging. A pool of one connection (the
      // embedded database's) is a queue, though: a map asking for twenty tiles at once waits longer
      // than a second for its turn, so there a request waits as long as a statement may run.
      connectionTimeoutMillis: poolSize === 1 ? statementTimeoutMs : 1000,
      idleTimeoutMillis: poolSize === 1 ? 0 : 30_000,
      application_name: 'twin-service',
      // 0 turns the timeout off (migrations: CREATE EXTENSION postgis alone can take longer). No JIT:
      // every statement here is short, and compiling one costs more than it saves (0.3-0.6 s on a
      // low-zoom vector tile, docs/PERFORMANCE.md).
      options: `-c TimeZone=UTC -c statement_timeout=${statementTimeoutMs} -c jit=off`,
    },
  };
}
