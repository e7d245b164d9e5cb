// First: on an unsupported Node.js, one line and exit 1 (common/node-version.ts).
import './common/node-gate.js';
import type { AddressInfo } from 'node:net';
import { limitHeapGrowth } from './common/heap-growth.js';
import { ConfigError, loadConfig } from './config/app-config.js';
// Everything else is imported in main(), after tracing started (when it is on): OpenTelemetry's
// instrumentations patch http, fastify and pg as they load, so those must load after it.

/** After SIGTERM/SIGINT: answer 503 this long before the listener closes (see CreateAppOptions). */
const SHUTDOWN_DRAIN_MS = 500;
/** A shutdown that has not finished by then (a request or hook that never ends) exits with code 1. */
const SHUTDOWN_DEADLINE_MS = 9_000;

async function main(): Promise<void> {
  const started = Date.now();
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  limitHeapGrowth(config.heapGrowingPercent);
  // Off: the SDK is not even loaded (no cost). On: started before the service's modules load.
  const tracing = config.otelEndpoint ? (await import('./common/telemetry/tracing.js')).startTracing() : undefined;
  (await import('./common/http/node-http-exports.js')).dropUnusedHttpExports();
  // One after the other: concurrent import()s of modules that require() the same ES module race (ERR_REQUIRE_ESM_RACE_CONDITION).
  const { Logger } = await import('@nestjs/common');
  const { createApp } = await import('./app.factory.js');
  const { AdminService } = await import('./admin/admin.service.js');
  const { firstSteps, localBaseUrl } = await import('./admin/first-steps.js');
  const { Database } = await import('./database/database.js');
  const app = await createApp(config, { shutdownDrainMs: SHUTDOWN_DRAIN_MS });
  // Spans still batched are sent when the server closes (before the shutdown hooks exit the process).
  if (tracing) app.getHttpServer().once('close', () => void tracing.shutdown().catch(() => undefined));
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      setTimeout(() => {
        process.stderr.write(`shutdown after ${signal} did not finish within ${SHUTDOWN_DEADLINE_MS} ms; exiting\n`);
        process.exit(1);
      }, SHUTDOWN_DEADLINE_MS).unref();
    });
  }
  await app.listen({ port: config.port, host: config.host });
  const port = (app.getHttpServer().address() as AddressInfo).port;
  const baseUrl = localBaseUrl(config.publicUrl, config.host, port);
  new Logger('Boot').log(`listening on ${baseUrl} (ready in ${Date.now() - started} ms); API docs at ${baseUrl}/docs`);
  const database = app.get(Database);
  if (database.kind === 'embedded') {
    // The embedded database is this process's alone: `npm run cli` runs its commands in here. Loaded
    // only then: the commands (place generation and import among them) are code a server on
    // PostgreSQL would keep on its heap for nothing.
    const { serveCliChannel } = await import('./cli/channel.js');
    const channel = await serveCliChannel(app, config.dataDir, baseUrl);
    app.getHttpServer().once('close', () => void channel.close());
  }
  if (database.createdNow) {
    // A new embedded database is somebody's first run: give them a tenant to try the API with.
    const demo = await app.get(AdminService).bootstrap({ organization: 'Demo organization', account: 'Demo account', twin: 'Demo twin' });
    process.stdout.write(
      ['', `A new embedded database in ${config.dataDir}, with a demo tenant:`, '', ...firstSteps(demo, baseUrl), '', 'More: npm run cli -- --help', ''].join('\n'),
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
