import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { dataSourceOptions, readTimeoutMs } from './data-source-options.js';
import { EMBEDDED_POOL_SIZE, EmbeddedPostgres, startEmbeddedPostgres } from './embedded-postgres.js';
import { installPooledQueries } from './pooled-queries.js';
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
  ) {}

  /** True when this start created a new embedded database (main.ts then sets up a demo tenant). */
  get createdNow(): boolean {
    return this.embedded?.created ?? false;
  }

  static async open(config: Pick<AppConfig, 'databaseUrl' | 'dataDir' | 'databasePoolSize' | 'databaseStatementTimeoutMs'>, logger = new Logger('Database')): Promise<Database> {
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
    const dataSource = new DataSource(dataSourceOptions(url, poolSize, config.databaseStatementTimeoutMs));
    let sharedSession = embedded !== undefined;
    try {
      await migrate(url, logger);
      await dataSource.initialize();
      if (!sharedSession) {
        const [{ version }]: { version: string }[] = await dataSource.query('SELECT version() AS version');
        sharedSession = version.includes('PGlite');
      }
      // Client-side read timeout and prepared statements on every pooled query; queries outside transactions straight to the pool.
      installPooledQueries(dataSource, { readTimeoutMs: readTimeoutMs(config.databaseStatementTimeoutMs), preparedStatements: !sharedSession });
    } catch (error) {
      if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
      await embedded?.stop().catch(() => undefined);
      throw error;
    }
    return new Database(dataSource, embedded ? 'embedded' : 'postgres', embedded, sharedSession);
  }

  /** Cheap liveness probe for /health. */
  async ping(): Promise<boolean> {
    try {
      await this.dataSource.query('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
    await this.embedded?.stop();
  }
}

/**
 * Migrations run on a connection of their own without statement timeouts: the request-sized bound
 * would cut off schema work such as CREATE EXTENSION postgis (over 15 s on a loaded machine with the
 * embedded database) or an index build over a large table.
 */
async function migrate(url: string, logger: Pick<Logger, 'log'>): Promise<void> {
  const migrator = new DataSource(dataSourceOptions(url, 1, 0));
  await migrator.initialize();
  try {
    const applied = await migrator.runMigrations({ transaction: 'each' });
    if (applied.length > 0) logger.log(`database: applied ${applied.length} migration(s): ${applied.map((m) => m.name).join(', ')}`);
  } finally {
    await migrator.destroy();
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
