import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { ConsoleLogger, LogLevel as NestLogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { AppModule } from './app.module.js';
import { ApiError } from './common/json-api/api-error.js';
import { EnvelopeInterceptor } from './common/json-api/envelope.interceptor.js';
import { JsonApiErrorFilter, sendError } from './common/json-api/error.filter.js';
import { RouteTable } from './common/http/route-table.js';
import { setupOpenApi } from './common/openapi/setup.js';
import type { AppConfig, LogLevel } from './config/app-config.js';

/** Media types whose bodies are parsed as JSON; anything else with a body is a 415. */
export const JSON_MEDIA_TYPES = ['application/vnd.api+json', 'application/json'];
/** Raw upload media types (images), read as bytes and checked by the images module. */
export const IMAGE_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'];

const NEST_LEVELS: Record<LogLevel, NestLogLevel[]> = {
  fatal: ['fatal'],
  error: ['fatal', 'error'],
  warn: ['fatal', 'error', 'warn'],
  info: ['fatal', 'error', 'warn', 'log'],
  debug: ['fatal', 'error', 'warn', 'log', 'debug'],
  trace: ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'],
  silent: [],
};

export interface CreateAppOptions {
  /** Where structured logs go; stdout by default. Tests capture them here. */
  logStream?: NodeJS.WritableStream;
}

/**
 * Builds the whole HTTP application (used by main.ts, the tests and the benchmark), so what is tested
 * is exactly what is served.
 */
export async function createApp(config: AppConfig, options: CreateAppOptions = {}): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    logger: {
      level: config.logLevel,
      stream: options.logStream,
      // Tokens must never reach the logs.
      redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]'], censor: '[redacted]' },
    },
    // Per-request lines only when debugging: at service rates they would dominate the log volume.
    logController: new LogController({ disableRequestLogging: config.logLevel !== 'debug' && config.logLevel !== 'trace' }),
    bodyLimit: config.bodyLimitBytes,
    requestTimeout: config.requestTimeoutMs,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    return503OnClosing: true,
  });
  const logger = new ConsoleLogger({ json: true, logLevels: NEST_LEVELS[config.logLevel] });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.register(config), adapter, {
    logger,
    abortOnError: false,
    bodyParser: false,
  });
  const fastify = app.getHttpAdapter().getInstance() as unknown as FastifyInstance;
  const routes = new RouteTable();
  fastify.addHook('onRoute', (route) => routes.add(route.method, route.url));
  configureBodyParsers(fastify, config);
  fastify.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  fastify.addHook('onSend', async (_request, reply) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
  });
  // Failures before a Nest handler runs (body parsing, limits) get the same errors document.
  fastify.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => sendError(reply, request, error, logger));

  app.useGlobalFilters(new JsonApiErrorFilter(logger, (request) => methodNotAllowed(routes, request)));
  app.useGlobalInterceptors(new EnvelopeInterceptor(config));
  if (config.corsOrigins.length > 0) {
    app.enableCors({
      origin: config.corsOrigins.includes('*') ? true : config.corsOrigins,
      allowedHeaders: ['Authorization', 'Content-Type', 'X-Organization', 'X-Twin', 'Idempotency-Key', 'Last-Event-ID', 'If-None-Match'],
      exposedHeaders: ['Location', 'Retry-After', 'ETag', 'X-Request-Id'],
      methods: ['GET', 'POST', 'PATCH', 'DELETE'],
    });
  }
  setupOpenApi(app);
  app.enableShutdownHooks();
  await app.init();
  await fastify.ready();
  return app;
}

function methodNotAllowed(routes: RouteTable, request: FastifyRequest): ApiError | undefined {
  const allowed = routes.allowedMethods(request.url);
  if (allowed.length === 0 || allowed.includes(request.method)) return undefined;
  return new ApiError(405, 'method_not_allowed', 'Method not allowed', `${request.method} is not supported here; use ${allowed.join(', ')}.`, undefined, {
    Allow: allowed.join(', '),
  });
}

function configureBodyParsers(fastify: FastifyInstance, config: AppConfig): void {
  fastify.removeAllContentTypeParsers();
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.addContentTypeParser(JSON_MEDIA_TYPES, { parseAs: 'string' }, (request, body, done) => {
    // JSON:API DELETE bodies are optional: an empty body is no document, not a syntax error.
    if (body === '' || body === undefined) return done(null, undefined);
    parseJson(request, body as string, done);
  });
  fastify.addContentTypeParser(IMAGE_MEDIA_TYPES, { parseAs: 'buffer', bodyLimit: config.imageLimitBytes }, (_request, body, done) => done(null, body));
}

