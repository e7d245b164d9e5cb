import { Logger } from '@nestjs/common';
import { Client, type Pool } from 'pg';
import { DataSource } from 'typeorm';
import { migrations } from '../../db/migrations/index.js';
import type { AppConfig } from '../config/app-config.js';
import { dataSourceOptions, readTimeoutMs } from './data-source-options.js';
import { EMBEDDED_POOL_SIZE, EmbeddedPostgres, startEmbeddedPostgres } from './embedded-postgres.js';
import { DatabaseLiveness } from './liveness.js';
import { installPooledQueries } from './pooled-queries.js';
import { ReadReplicas } from './read-replicas.js';
import { rowShape } from './row-shape.js';
import { Sql } from './sql.js';
import { installPgTypeParsers } from './timestamps.js';

/**
 * Owns the connection to PostgreSQL: the real one named by DATABASE_URL, or the embedded PGlite when
 * none is given. Opens, migrates, reports which one is in use, and closes in the right order.
 */
export class Database {
  private constructor(
    readonly dataSource: DataSource,
    readonly kind: 'postgres' | 'embedded',
    private readonly embedded: EmbeddedPostgres | undefined,
    /**
     * The server is PGlite (started here, or behind DATABASE_URL as in the test suite): one PostgreSQL
     * session shared by every socket connection. Prepared statements would outlive the connection that
     * made them, and a listening connection is not safe there.
     */
    readonly sharedSession: boolean,
    /** DATABASE_REPLICA_URLS: where `Sql.replicaRows` sends lag-tolerant reads; undefined without replicas. */
    readonly replicas: ReadReplicas | undefined,
    /** The watch for a frozen server (liveness.ts); undefined on PGlite. */
    readonly liveness: DatabaseLiveness | undefined,
  ) {
    this.sql = new Sql(dataSource);
  }

  /** The statements of the probes below (outside any transaction). */
  private readonly sql: Sql;

  /** True when this start created a new embedded database (main.ts then sets up a demo tenant). */
  get createdNow(): boolean {
    return this.embedded?.created ?? false;
  }

  static async open(
    config: Pick<AppConfig, 'databaseUrl' | 'dataDir' | 'databasePoolSize' | 'databaseStatementTimeoutMs'> & Partial<Pick<AppConfig, 'databaseReplicaUrls' | 'databasePoolWaitMs'>>,
    logger = new Logger('Database'),
  ): Promise<Database> {
    installPgTypeParsers();
    let embedded: EmbeddedPostgres | undefined;
    let url = config.databaseUrl;
    let poolSize = config.databasePoolSize;
    if (!url) {
      const started = Date.now();
      embedded = await startEmbeddedPostgres({ dataDir: config.dataDir });
      url = embedded.url;
      poolSize = EMBEDDED_POOL_SIZE;
      logger.log(`database: ${embedded.describe()} (started in ${Date.now() - started} ms)`);
    } else {
      logger.log(`database: PostgreSQL at ${redactUrl(url)}`);
    }
    const dataSource = new DataSource(dataSourceOptions(url, poolSize, config.databaseStatementTimeoutMs, config.databasePoolWaitMs));
    let sharedSession = embedded !== undefined;
    let replicas: ReadReplicas | undefined;
    let liveness: DatabaseLiveness | undefined;
    try {
      await migrate(url, logger, { exclusive: embedded === undefined });
      await dataSource.initialize();
      if (!sharedSession) {
        const version = await new Sql(dataSource).value(VERSION, 'SELECT version() AS version');
        sharedSession = version.includes('PGlite');
      }
      // A frozen server is watched for on a real PostgreSQL with request timeouts; PGlite shares one
      // session between its connections, so the watch's own probe connection would queue behind them.
      if (!sharedSession && config.databaseStatementTimeoutMs > 0) liveness = new DatabaseLiveness(url);
      // Client-side read timeout, prepared statements and the liveness watch on every pooled query; queries outside transactions straight to the pool.
      installPooledQueries(dataSource, { readTimeoutMs: readTimeoutMs(config.databaseStatementTimeoutMs), preparedStatements: !sharedSession, liveness });
      // Only beside a real primary: the embedded database has no replicas (the configuration refuses it).
      if (!embedded && config.databaseReplicaUrls?.length) {
        replicas = ReadReplicas.open(config.databaseReplicaUrls, {
          poolSize,
          statementTimeoutMs: config.databaseStatementTimeoutMs,
          poolWaitMs: config.databasePoolWaitMs,
          readTimeoutMs: readTimeoutMs(config.databaseStatementTimeoutMs),
          preparedStatements: !sharedSession,
        });
        logger.log(`database: ${config.databaseReplicaUrls.length} read replica(s) at ${config.databaseReplicaUrls.map(redactUrl).join(', ')}`);
      }
    } catch (error) {
      liveness?.close();
      if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
      await embedded?.stop().catch(() => undefined);
      throw error;
    }
    return new Database(dataSource, embedded ? 'embedded' : 'postgres', embedded, sharedSession, replicas, liveness);
  }

  /** Cheap liveness probe for /health. */
  async ping(): Promise<boolean> {
    try {
      await this.sql.run('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Readiness: the database answers and every migration this build knows is recorded as applied. A
   * replica whose code is newer than the schema (another one still migrating, or a migration that
   * failed) is then kept out of rotation instead of failing requests on missing tables.
   */
  async readiness(): Promise<{ database: 'up' | 'down'; migrations: 'applied' | 'pending' | 'unknown' }> {
    try {
      const names = migrations.map((migration) => migration.name);
      const applied = await this.sql.value(
        APPLIED,
        'SELECT count(DISTINCT name)::int AS applied FROM schema_migrations WHERE name = ANY($1::text[])',
        [names],
      );
      return { database: 'up', migrations: applied === names.length ? 'applied' : 'pending' };
    } catch (error) {
      // The table itself missing means nothing was migrated yet; anything else is an unreachable database.
      if ((error as { code?: string }).code === '42P01') return { database: 'up', migrations: 'pending' };
      return { database: 'down', migrations: 'unknown' };
    }
  }

  /** The pg pool under TypeORM: connections open, idle, and requests waiting for one (for the metrics). */
  poolStats(): { total: number; idle: number; waiting: number } {
    const pool = (this.dataSource.driver as unknown as { master?: Pool }).master;
    return { total: pool?.totalCount ?? 0, idle: pool?.idleCount ?? 0, waiting: pool?.waitingCount ?? 0 };
  }

  async close(): Promise<void> {
    this.liveness?.close();
    await this.replicas?.close();
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
    await this.embedded?.stop();
  }
}

const VERSION = rowShape({ version: 'text' });
const APPLIED = rowShape({ applied: 'integer' });

/**
 * Key of the session-level advisory lock migrations run under (the two-integer form, a key space of its
 * own: the change log's transaction locks use the single-bigint form).
 */
const MIGRATION_LOCK = [0x7477696e, 1] as const;

/**
 * Applies pending migrations. Replicas starting together against a new database would otherwise run
 * them at the same time and collide in PostgreSQL's catalogs (`duplicate key value violates unique
 * constraint "pg_type_typname_nsp_index"` from concurrent CREATE TABLE / CREATE EXTENSION): each takes
 * a PostgreSQL advisory lock on a connection of its own first, so one applies them and the others,
 * once they get the lock, find nothing left to do. The lock is session-level, so it is released if
 * the process dies.
 *
 * Migrations (and the wait for the lock) run without statement timeouts: the request-sized bound
 * would cut off schema work such as CREATE EXTENSION postgis (over 15 s on a loaded machine with the
 * embedded database) or an index build over a large table, and a replica waiting behind it.
 * `exclusive: false` for the embedded database this process started: nobody else can reach it.
 */
export async function migrate(url: string, logger: Pick<Logger, 'log'>, { exclusive = true } = {}): Promise<number> {
  const lock = exclusive ? new Client({ connectionString: url, application_name: 'twin-service migrations lock', options: '-c statement_timeout=0 -c lock_timeout=0' }) : undefined;
  if (lock) {
    await lock.connect();
    // A broken lock connection must not take the process down with an unhandled 'error' event; the
    // migration itself then fails or finishes on its own connection.
    lock.on('error', () => undefined);
    const waited = Date.now();
    await lock.query('SELECT pg_advisory_lock($1, $2)', [...MIGRATION_LOCK]);
    if (Date.now() - waited > 100) logger.log(`database: waited ${Date.now() - waited} ms for the migration lock`);
  }
  try {
    const migrator = new DataSource(dataSourceOptions(url, 1, 0));
    await migrator.initialize();
    try {
      const applied = await migrator.runMigrations({ transaction: 'each' });
      if (applied.length > 0) logger.log(`database: applied ${applied.length} migration(s): ${applied.map((m) => m.name).join(', ')}`);
      return applied.length;
    } finally {
      await migrator.destroy();
    }
  } finally {
    if (lock) {
      await lock.query('SELECT pg_advisory_unlock($1, $2)', [...MIGRATION_LOCK]).catch(() => undefined);
      await lock.end().catch(() => undefined);
    }
  }
}

/** Hides the password of a connection URL in logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}
