import { chmodSync, existsSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { INestApplicationContext } from '@nestjs/common';
import { ApiError } from '../common/json-api/api-error.js';
import { CliContext, CliUsageError, parseCommandArgs } from './cli-command.js';
import { commands } from './commands/index.js';
import { progressBar, type Progress, type ProgressSpec } from './progress.js';

/**
 * The embedded database belongs to one process: while the server runs on it, `npm run cli` cannot open
 * it. The server therefore listens on a Unix socket in DATA_DIR (owner-only) and runs CLI commands
 * itself, with its own database connection: the CLI sends its arguments and prints what comes back.
 * One JSON object per line: the request `{argv, cwd}`; then `{out}`, `{warn}`, `{progress: spec}`,
 * `{update: {done, detail}}`, `{stop: true}` and finally `{exit, error?}`.
 */

export const channelPath = (dataDir: string): string => join(dataDir, 'cli.sock');

type Message =
  | { out: string }
  | { warn: string }
  | { progress: ProgressSpec }
  | { update: { done: number; detail?: string } }
  | { stop: true }
  | { exit: number; error?: string };

/** Opened by main.ts when the service runs on the embedded database; close() removes the socket. */
export async function serveCliChannel(app: INestApplicationContext, dataDir: string, baseUrl: string): Promise<{ close(): Promise<void> }> {
  const path = channelPath(dataDir);
  // A socket file left by a process that died (the data directory's pid lock says it is ours now).
  rmSync(path, { force: true });
  const server: Server = createServer((socket) => {
    const lines = createInterface({ input: socket });
    lines.once('line', (line) => {
      lines.close();
      void serveOne(socket, line, app, baseUrl);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        rmSync(path, { force: true });
      }),
  };
}

async function serveOne(socket: Socket, requestLine: string, app: INestApplicationContext, baseUrl: string): Promise<void> {
  const send = (message: Message) => socket.writable && socket.write(`${JSON.stringify(message)}\n`);
  try {
    const { argv, cwd } = JSON.parse(requestLine) as { argv: string[]; cwd: string };
    const command = commands.find((candidate) => candidate.name === argv[0]);
    if (!command) throw new CliUsageError(`unknown command "${argv[0]}"`);
    const { values, positionals } = parseCommandArgs(command, argv.slice(1));
    const context: CliContext = {
      values,
      positionals,
      cwd,
      app,
      baseUrl,
      out: (line) => send({ out: line }),
      warn: (line) => send({ warn: line }),
      progress: (spec) => {
        send({ progress: spec });
        return { update: (done, detail) => send({ update: { done, detail } }), stop: () => send({ stop: true }) };
      },
    };
    await command.run(context);
    send({ exit: 0 });
  } catch (error) {
    send({ exit: error instanceof CliUsageError ? 2 : 1, error: oneLine(error) });
  } finally {
    socket.end();
  }
}

/** The one line a failure is shown as (stacks only with DEBUG set, by main.ts). */
export function oneLine(error: unknown): string {
  if (error instanceof ApiError) return error.detail;
  return (error instanceof Error ? error.message : String(error)).split('\n')[0];
}

/** True when a server has the channel open for this data directory. */
export const channelOpen = (dataDir: string): boolean => existsSync(channelPath(dataDir));

/** Runs `argv` inside the server that holds the embedded database; resolves with the exit code. */
export function runInServer(dataDir: string, argv: string[], cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(channelPath(dataDir));
    let progress: Progress | undefined;
    let exitCode: number | undefined;
    socket.once('error', reject);
    socket.once('connect', () => socket.write(`${JSON.stringify({ argv, cwd })}\n`));
    createInterface({ input: socket }).on('line', (line) => {
      const message = JSON.parse(line) as Message;
      if ('out' in message) process.stdout.write(`${message.out}\n`);
      else if ('warn' in message) process.stderr.write(`${message.warn}\n`);
      else if ('progress' in message) progress = progressBar(message.progress);
      else if ('update' in message) progress?.update(message.update.done, message.update.detail);
      else if ('stop' in message) progress?.stop();
      else if ('exit' in message) {
        progress?.stop();
        if (message.error) process.stderr.write(`error: ${message.error}\n`);
        exitCode = message.exit;
      }
    });
    socket.once('close', () => (exitCode === undefined ? reject(new Error('the server closed the CLI channel before the command finished')) : resolve(exitCode)));
  });
}
