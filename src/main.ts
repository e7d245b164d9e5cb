import { Logger } from '@nestjs/common';
import { createApp } from './app.factory.js';
import { ConfigError, loadConfig } from './config/app-config.js';

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
  const app = await createApp(config);
  await app.listen({ port: config.port, host: config.host });
  new Logger('Boot').log(`listening on http://${config.host}:${config.port} (ready in ${Date.now() - started} ms); API docs at /docs`);
}

main().catch((error: unknown) => {
  process.stderr.write(`fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
