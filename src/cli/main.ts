import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../app.module.js';
import { ApiError } from '../common/json-api/api-error.js';
import { ConfigError, loadConfig } from '../config/app-config.js';
import { CliContext, CliUsageError, parseCommandArgs } from './cli-command.js';
import { commands } from './commands/index.js';

/**
 * `npm run cli -- <command> [options]`: operator tasks against the configured database
 * (DATABASE_URL, or the embedded database under DATA_DIR while the server is stopped).
 */
async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = commands.find((candidate) => candidate.name === name);
  if (!command) {
    const help = commands.map((c) => `  ${c.usage.padEnd(72)} ${c.summary}`).join('\n');
    process.stderr.write(`${name && name !== 'help' && name !== '--help' ? `unknown command "${name}"\n\n` : ''}usage: npm run cli -- <command> [options]\n\n${help}\n`);
    return name && name !== 'help' && name !== '--help' ? 2 : 0;
  }
  const { values, positionals } = parseCommandArgs(command, rest);
  const context: CliContext = { values, positionals, out: (line) => process.stdout.write(`${line}\n`) };
  if (!command.needsDatabase) {
    await command.run(context);
    return 0;
  }
  const config = { ...loadConfig(), logLevel: 'error' as const };
  const app = await NestFactory.createApplicationContext(AppModule.register(config), { logger: ['fatal', 'error'], abortOnError: false });
  try {
    await command.run({ ...context, app });
  } finally {
    await app.close();
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof CliUsageError || error instanceof ConfigError) process.stderr.write(`${error.message}\n`);
    else if (error instanceof ApiError) process.stderr.write(`error: ${error.detail}\n`);
    else process.stderr.write(`error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(error instanceof CliUsageError || error instanceof ConfigError ? 2 : 1);
  },
);
