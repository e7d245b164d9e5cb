import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { reportFigures } from './support/figures';
import { freePort, PgCluster } from './support/pg-cluster';
import { distDir, ServiceProcess } from './support/service-process';

/** The built service's migration list (the fault tests run the build, and have no .js → .ts mapping). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { migrations } = require(join(distDir(), 'db', 'migrations', 'index.js')) as { migrations: { name: string }[] };
const ROUNDS = Number(process.env.FAULTS_MIGRATION_ROUNDS ?? 3);
const REPLICAS = 3;

function cli(databaseUrl: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(distDir(), 'src', 'cli', 'main.js'), ...args],
      { env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: databaseUrl }, timeout: 120_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * Replicas starting together on a new, empty database: each runs the migrations at boot, under a
 * PostgreSQL advisory lock (src/database/database.ts, migrate). Without it, concurrent CREATE TABLE /
 * CREATE EXTENSION failed starts with `duplicate key value violates unique constraint
 * "pg_type_typname_nsp_index"` (10 of 24 starts). Every round: a new database, three built services
 * started at the same moment; all must come up ready and the schema be applied once.
 */
describe('faults: replicas starting together on a new database', () => {
  let cluster: PgCluster;

  beforeAll(async () => {
    cluster = await PgCluster.create();
  });

  afterAll(async () => {
    await cluster?.destroy();
  });

  it(`${ROUNDS} rounds of ${REPLICAS} simultaneous starts: all ready, every migration applied once`, async () => {
    const startsMs: number[] = [];
    let failedStarts = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const database = `race_${round}`;
      await cluster.createDatabase(database);
      const ports = await Promise.all(Array.from({ length: REPLICAS }, (_, i) => freePort(20000 + round * 10 + i * 1000)));
      const started = Date.now();
      const results = await Promise.allSettled(ports.map((port) => ServiceProcess.start({ port, databaseUrl: cluster.url(database), env: { LOG_LEVEL: 'info' } })));
      const services = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
      try {
        failedStarts += results.length - services.length;
        const failures = results.flatMap((result) => (result.status === 'rejected' ? [String((result.reason as Error).message).slice(0, 2000)] : []));
        expect(failures).toEqual([]);
        startsMs.push(Date.now() - started);
        for (const service of services) {
          const ready = await fetch(`http://127.0.0.1:${service.port}/health/ready`);
          expect(ready.status).toBe(200);
          expect(await ready.json()).toEqual({ status: 'ok', database: { status: 'up', kind: 'postgres' }, migrations: { status: 'applied' } });
        }
        const rows = await cluster.withClient(database, async (client) => (await client.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY id')).rows);
        expect(rows.map((row) => row.name)).toEqual(migrations.map((migration) => migration.name));
        // Exactly one replica applied them; the others waited for the lock and found nothing to do.
        const appliers = services.filter((service) => /applied \d+ migration\(s\)/.test(service.logs));
        expect(appliers).toHaveLength(1);
      } finally {
        await Promise.all(services.map((service) => service.stop()));
      }
    }
    reportFigures('migrations: simultaneous starts', {
      rounds: ROUNDS,
      'starts / failed': `${ROUNDS * REPLICAS} / ${failedStarts}`,
      'three replicas on a new database -> all answering ms (per round)': startsMs.join(', '),
    });
  });

  it('npm run migrate (the CLI command) applies them alone, and a second run has nothing to do', async () => {
    await cluster.createDatabase('migrate_cli');
    const url = cluster.url('migrate_cli');
    const [first, second] = await Promise.all([cli(url, ['migrate']), cli(url, ['migrate'])]);
    expect([first.code, second.code]).toEqual([0, 0]);
    expect([first.stdout.trim(), second.stdout.trim()].sort()).toEqual([`migrations: applied ${migrations.length}`, 'migrations: nothing to apply']);
    const third = await cli(url, ['migrate']);
    expect(third).toEqual(expect.objectContaining({ code: 0, stdout: 'migrations: nothing to apply\n' }));
  });
});
