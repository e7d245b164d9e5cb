import './resolve-js-to-ts';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { Database } from '../../src/database/database';

/**
 * Prepares the one database all e2e files share: the PostgreSQL named by TEST_DATABASE_URL (whose
 * name must contain "test", so a suite never runs against real data), or an in-memory PGlite with
 * PostGIS. Migrations run once here; every test creates its own organizations, so files never
 * depend on each other's data.
 */
export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  let url = process.env.TEST_DATABASE_URL;
  if (url) {
    const name = new URL(url).pathname.slice(1);
    if (!/test/i.test(name)) throw new Error(`Refusing to run tests against database "${name}": its name must contain "test".`);
    process.env.TEST_DATABASE_KIND = 'postgres';
  } else {
    const embedded = await startEmbeddedPostgres({ maxConnections: 4 });
    (globalThis as Record<string, unknown>).__EMBEDDED_TEST_DB__ = embedded;
    url = embedded.url;
    process.env.TEST_DATABASE_URL = url;
    process.env.TEST_DATABASE_KIND = 'embedded';
  }
  const database = await Database.open({ databaseUrl: url, dataDir: '', databasePoolSize: 1, databaseStatementTimeoutMs: 0 }, { log: () => undefined } as never);
  await database.close();
  process.stdout.write(`\ne2e database: ${process.env.TEST_DATABASE_KIND} (ready in ${Date.now() - started} ms)\n`);
}
