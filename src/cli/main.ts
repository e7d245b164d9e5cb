// First: on an unsupported Node.js, one line and exit 1 (common/node-version.ts).
import '../common/node-gate.js';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { localBaseUrl } from '../admin/first-steps.js';
import { AppModule } from '../app.module.js';
import { ConfigError, loadConfig } from '../config/app-config.js';
import { embeddedHolder } from '../database/embedded-postgres.js';
import { channelOpen, oneLine, runInServer } from './channel.js';
import { CliContext, CliUsageError, commandHelp, parseCommandArgs } from './cli-command.js';
import { commands } from './commands/index.js';
import { progressBar } from './progress.js';

const INVOCATION = 'npm run cli --';

const TOOL_HELP = [
  'Operator commands for the twin service.',
  '',
  `usage: ${INVOCATION} <command> [options]        ${INVOCATION} <command> --help   (options and examples)`,
  '',
  'commands:',
  ...commands.map((command) => `  ${command.name.padEnd(22)} ${command.summary}`),
  '',
  'The database: DATABASE_URL (PostgreSQL with PostGIS), else the embedded one in DATA_DIR (./data). While the',
  'server runs on the embedded database, commands run inside it (through DATA_DIR/cli.sock).',
  '',
].join('\n');

/**
 * `npm run cli -- <command> [options]`: operator tasks against the configured database. Every failure
 * is one line on stderr and a non-zero exit code (2: the command was called wrongly; 1: it failed);
 * DEBUG=1 adds the stack.
 */
async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(TOOL_HELP);
    return 0;
  }
  const command = commands.find((candidate) => candidate.name === name);
  if (!command) throw new CliUsageError(`unknown command "${name}" (${INVOCATION} --help lists the commands)`);
  const { values, positionals } = await withHelpHint(name, () => parseCommandArgs(command, rest));
  if (values.help) {
    process.stdout.write(commandHelp(command, INVOCATION));
    return 0;
  }
  const config = { ...loadConfig(), logLevel: 'error' as const };
  const context: CliContext = {
    values,
    positionals,
    cwd: process.cwd(),
    baseUrl: localBaseUrl(config.publicUrl, config.host, config.port),
    out: (line) => process.stdout.write(`${line}\n`),
    warn: (line) => process.stderr.write(`${line}\n`),
    progress: (spec) => progressBar(spec),
  };
  if (!command.needsDatabase) {
    await withHelpHint(name, () => command.run(context));
    return 0;
  }
  if (!config.databaseUrl) {
    const holder = embeddedHolder(config.dataDir);
    if (holder !== undefined) {
      if (channelOpen(config.dataDir)) return runInServer(config.dataDir, argv, process.cwd());
      throw new Error(`the embedded database in ${config.dataDir} is in use by process ${holder}, which does not take commands; stop it, or set DATABASE_URL`);
    }
  }
  const app = await NestFactory.createApplicationContext(AppModule.register(config), { logger: false, abortOnError: false });
  try {
    await withHelpHint(name, () => command.run({ ...context, app }));
  } finally {
    await app.close();
  }
  return 0;
}

/** Usage errors name the help that explains the command. */
async function withHelpHint<T>(name: string, action: () => T | Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof CliUsageError) throw new CliUsageError(`${error.message} (${INVOCATION} ${name} --help)`);
    throw error;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const usage = error instanceof CliUsageError || error instanceof ConfigError;
    const message = error instanceof ConfigError ? `invalid configuration: ${error.problems.join('; ')}` : oneLine(error);
    process.stderr.write(`error: ${message}\n`);
    if (process.env.DEBUG && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
    process.exit(usage ? 2 : 1);
  },
);
