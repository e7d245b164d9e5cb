import type { INestApplicationContext } from '@nestjs/common';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { isUuid } from '../common/value-checks.js';
import type { Progress, ProgressSpec } from './progress.js';

type OptionSpec = NonNullable<ParseArgsConfig['options']>[string] & {
  /** One line for `--help`. */
  description: string;
  /** Shown in `--help` as the value's name (`ORG_ID`, `FILE`). */
  value?: string;
};

/** One command of `npm run cli -- <command> …`. */
export interface CliCommand {
  name: string;
  summary: string;
  usage: string;
  options: Record<string, OptionSpec>;
  /** Shown by `<command> --help`: command lines that work as they are (ids in capitals to replace). */
  examples: string[];
  /** Commands that only read and write files run without opening the database. */
  needsDatabase: boolean;
  run(context: CliContext): Promise<void>;
}

export interface CliContext {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
  /** The directory the command was typed in: relative paths are relative to it (the command may run inside the server). */
  cwd: string;
  /** The application (services, repositories); only for commands that need the database. */
  app?: INestApplicationContext;
  /** The service's address as a person reaches it (PUBLIC_URL, or localhost and PORT). */
  baseUrl: string;
  out: (line: string) => void;
  /** A line on stderr: notices that are not the command's result. */
  warn: (line: string) => void;
  progress: (spec: ProgressSpec) => Progress;
}

/** A mistake in how the command was called: one line, exit code 2, and where to look. */
export class CliUsageError extends Error {}

export function parseCommandArgs(command: CliCommand, argv: string[]) {
  // parseArgs refuses keys it does not know (description, value), and undefined ones.
  const options = Object.fromEntries(
    Object.entries(command.options).map(([name, { description: _description, value: _value, ...parse }]) => [name, parse]),
  ) as NonNullable<ParseArgsConfig['options']>;
  try {
    return parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new CliUsageError((error as Error).message.split('\n')[0]);
  }
}

export function requireString(context: CliContext, name: string): string {
  const value = context.values[name];
  if (typeof value !== 'string' || value.length === 0) throw new CliUsageError(`--${name} is required`);
  return value;
}

/** A number option within bounds (`max` open when absent): anything else is a mistake in the call (exit 2), before any work. */
export function numberOption(context: CliContext, name: string, { min, max, integer }: { min: number; max?: number; integer?: boolean }): number {
  const raw = context.values[name];
  const value = Number(raw);
  const within = Number.isFinite(value) && value >= min && (max === undefined || value <= max) && (!integer || Number.isSafeInteger(value));
  if (typeof raw !== 'string' || raw.trim() === '' || !within) {
    const kind = integer ? 'an integer' : 'a number';
    throw new CliUsageError(`--${name} must be ${kind} ${max === undefined ? `of at least ${min}` : `from ${min} to ${max}`}, got "${String(raw)}"`);
  }
  return value;
}

/** An option naming a resource by its id: a value that is not a UUID is a mistake in the call (exit 2), before any work. */
export function uuidOption(context: CliContext, name: string, what: string): string {
  const value = requireString(context, name);
  if (!isUuid(value)) throw new CliUsageError(`--${name} takes ${what} id (a UUID), got "${value}"`);
  return value;
}

/** `<command> --help`: what it does, how to call it, every option, examples. */
export function commandHelp(command: CliCommand, invocation: string): string {
  const options = Object.entries(command.options).map(([name, spec]) => {
    const left = `--${name}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`;
    const fallback = spec.default !== undefined && spec.default !== false ? ` (default: ${String(spec.default)})` : '';
    return `  ${left.padEnd(28)} ${spec.description}${spec.multiple ? ' (may be repeated)' : ''}${fallback}`;
  });
  return [
    `${command.summary}.`,
    '',
    `usage: ${invocation} ${command.usage}`,
    '',
    'options:',
    ...options,
    `  ${'--help, -h'.padEnd(28)} this help`,
    '',
    'examples:',
    ...command.examples.map((example) => `  ${invocation} ${example}`),
    '',
  ].join('\n');
}
