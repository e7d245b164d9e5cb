import type { INestApplicationContext } from '@nestjs/common';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** One command of `npm run cli -- <command> …`. */
export interface CliCommand {
  name: string;
  summary: string;
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** Commands that only read and write files run without opening the database. */
  needsDatabase: boolean;
  run(context: CliContext): Promise<void>;
}

export interface CliContext {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
  /** The application (services, repositories); only for commands that need the database. */
  app?: INestApplicationContext;
  out: (line: string) => void;
}

export class CliUsageError extends Error {}

export function parseCommandArgs(command: CliCommand, argv: string[]) {
  try {
    return parseArgs({ args: argv, options: command.options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new CliUsageError(`${(error as Error).message}\nusage: ${command.usage}`);
  }
}

export function requireString(context: CliContext, name: string, usage: string): string {
  const value = context.values[name];
  if (typeof value !== 'string' || value.length === 0) throw new CliUsageError(`--${name} is required\nusage: ${usage}`);
  return value;
}
