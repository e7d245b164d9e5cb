import type { LoggerService } from '@nestjs/common';
import pino, { type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { TOKEN_PREFIX } from '../auth/tokens.js';

export const REDACTED = '[redacted]';

const TOKEN_IN_TEXT = new RegExp(`${TOKEN_PREFIX}[A-Za-z0-9_-]{16,}`, 'g');
/** `scheme://user:password@` (a DATABASE_URL or REDIS_URL in an error message): the password part. */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@/]+@/gi;

/** Masks anything shaped like an access token (`tw_` + base64url) in a string bound for the logs. */
export const redactTokens = (text: string): string => text.replace(TOKEN_IN_TEXT, `${TOKEN_PREFIX}${REDACTED}`);

/** Tokens and the passwords of connection URLs, masked: applied to every message and error the logger writes. */
export const redactSecrets = (text: string): string => redactTokens(text).replace(URL_PASSWORD, `$1${REDACTED}@`);

/**
 * Field paths that hold secrets whatever their value looks like: credentials headers, and anything
 * named like a password or secret one level down (a config object, a connection's options).
 */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'password',
  '*.password',
  'token',
  '*.token',
  'adminToken',
  '*.adminToken',
  'cursorSecret',
  '*.cursorSecret',
  'databaseUrl',
  '*.databaseUrl',
  'redisUrl',
  '*.redisUrl',
];

const errorSerializer = (error: Error) => {
  const serialized = pino.stdSerializers.err(error);
  return { ...serialized, message: redactSecrets(serialized.message ?? ''), stack: redactSecrets(serialized.stack ?? '') };
};

/**
 * The service's one logger: pino, one JSON object per line on stdout (or `stream`), used by Fastify
 * (request-bound lines carry `requestId`) and, through NestPinoLogger, by everything that logs through
 * Nest. Shape: `{"level":"info","time":"<ISO 8601>","pid":…,"hostname":…,"context"?:…,"requestId"?:…,"msg":…}`.
 */
export function createLogger(level: LevelWithSilent, stream?: DestinationStream | NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      serializers: { err: errorSerializer, error: errorSerializer },
      hooks: {
        // Messages are free text (an error's message, a URL): masked before they are written.
        logMethod(args, method) {
          for (let i = 0; i < args.length; i++) if (typeof args[i] === 'string') args[i] = redactSecrets(args[i] as string);
          method.apply(this, args);
        },
      },
    },
    // Lines to stdout are written asynchronously: while a write is in flight the next lines gather and go
    // in one write. A synchronous write per line (pino's default) took the twin detail from 5,500 to 4,500
    // requests/s at `info`, where every request writes its access line; pino flushes what is pending on exit.
    stream ?? pino.destination({ dest: 1, sync: false }),
  );
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Nest's own boot lines: "Starting Nest application...", one per module initialised, one per controller and
 * route mapped, "successfully started": about a hundred at every start, for whoever debugs the wiring. They
 * are written at `debug`, so a start at `info` shows what a person needs (the database, the address, the
 * demo tenant) on one screen; their warnings and errors keep their level.
 */
const NEST_BOOT_CONTEXTS: ReadonlySet<string> = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

/**
 * A context as its class is named in the sources. In the server's bundle (scripts/lib/bundle-service.mjs)
 * Nest's classes are named with a leading underscore (`_RouterExplorer`): esbuild names a class of an
 * ES module so when the module is hoisted, and Nest's loggers take their context from the class's name.
 */
const nestContext = (context: string): string => (context.startsWith('_') ? context.slice(1) : context);

/**
 * Nest's LoggerService on the same pino logger, so Nest's own lines (boot, module errors, the
 * `new Logger(context)` lines of the services) have the same shape as the request lines. Nest passes
 * `(message, context)`, and for errors `(message, stack, context)`.
 */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    const context = rest[rest.length - 1];
    this.write(typeof context === 'string' && NEST_BOOT_CONTEXTS.has(nestContext(context)) ? 'debug' : 'info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(level: Level, message: unknown, rest: unknown[]): void {
    if (!this.logger.isLevelEnabled(level)) return;
    const params = [...rest];
    const context = params.length > 0 && typeof params[params.length - 1] === 'string' ? (params.pop() as string) : undefined;
    const stack = params.find((param): param is string => typeof param === 'string' && param.includes('\n    at '));
    const fields: Record<string, unknown> = {};
    if (context !== undefined) fields.context = nestContext(context);
    if (message instanceof Error) {
      this.logger[level]({ ...fields, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.logger[level]({ ...fields, data: message });
    } else {
      if (stack) fields.stack = redactSecrets(stack);
      this.logger[level](fields, String(message));
    }
  }
}
