// The built service (dist/) on a fresh PostgreSQL database with one tenant: how the single-purpose
// benches (batches.mjs, streams.mjs, webhooks.mjs) start what they measure.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { flag } from './args.mjs';
import { SERVICE_NODE_OPTIONS } from './servers.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Builds when the sources changed (unless --no-build), drops and creates `database` (on PGURL_BASE,
 * default postgresql://postgres@127.0.0.1:5432), starts the service on it at `port` as production runs
 * it (NODE_ENV=production, the Dockerfile's NODE_OPTIONS, warnings only, rate limits and the metrics
 * listener off) plus `env`, waits until it is ready and bootstraps a tenant through the CLI.
 * PROFILE_NODE_OPTIONS is appended to the service's NODE_OPTIONS, to look inside it
 * (`PROFILE_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" node bench/batches.mjs`).
 */
export async function startFreshService({ database, port, env: extra = {} }) {
  if (!flag('no-build')) execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--if-changed', '--quiet'], { stdio: 'inherit' });
  const base = process.env.PGURL_BASE ?? 'postgresql://postgres@127.0.0.1:5432';
  const admin = new pg.Client({ connectionString: `${base}/postgres` });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const databaseUrl = `${base}/${database}`;
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    NODE_OPTIONS: `${SERVICE_NODE_OPTIONS} ${process.env.PROFILE_NODE_OPTIONS ?? ''}`,
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '0',
    METRICS_PORT: '0',
    ...extra,
  };
  const service = spawn(process.execPath, [join(root, 'dist', 'src', 'main.js')], { env, stdio: ['ignore', 'inherit', 'inherit'] });
  const stop = () => service.kill('SIGTERM');
  try {
    for (let i = 0; ; i++) {
      if (await fetch(`http://127.0.0.1:${port}/health/ready`).then((r) => r.ok, () => false)) break;
      if (i > 600) throw new Error('the service did not start');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const cli = execFileSync(process.execPath, [join(root, 'dist', 'src', 'cli', 'main.js'), 'bootstrap', '--json'], { env: { ...env, LOG_LEVEL: 'error' } });
    const tenant = JSON.parse(cli.toString().trim().split('\n').pop());
    /** The service's resident memory (MB), from /proc. */
    const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${service.pid}/status`, 'utf8'))[1]) / 1024;
    return { databaseUrl, service, tenant, url: (path) => `http://127.0.0.1:${port}${path}`, rssMb, stop };
  } catch (error) {
    stop();
    throw error;
  }
}
