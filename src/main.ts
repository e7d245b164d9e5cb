import { Logger } from '@nestjs/common';
import { createApp } from './app.factory.js';
import { ConfigError, loadConfig } from './config/app-config.js';

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
  const app = await createApp(config, { shutdownDrainMs: SHUTDOWN_DRAIN_MS });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      setTimeout(() => {
        process.stderr.write(`shutdown after ${signal} did not finish within ${SHUTDOWN_DEADLINE_MS} ms; exiting\n`);
        process.exit(1);
      }, SHUTDOWN_DEADLINE_MS).unref();
    });
  }
  await app.listen({ port: config.port, host: config.host });
  new Logger('Boot').log(`listening on http://${config.host}:${config.port} (ready in ${Date.now() - started} ms); API docs at /docs`);
}

main().catch((error: unknown) => {
  process.stderr.write(`fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
