import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { WebhookWorker } from './webhooks/webhook-worker.js';
import { MetricsServer } from './common/metrics/metrics-server.js';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { AppModule } from './app.module.js';
import { ApiError } from './common/json-api/api-error.js';
import { EnvelopeInterceptor } from './common/json-api/envelope.interceptor.js';
import { JsonApiErrorFilter, sendError } from './common/json-api/error.filter.js';
import { createLogger, NestPinoLogger } from './common/logging/logger.js';
import { exactMediaType, JSON_API_MEDIA_TYPE } from './common/json-api/resource.js';
import { requestIdFrom } from './common/http/request-id.js';
import { observeRequests } from './common/http/request-observer.js';
import { Metrics } from './common/metrics/metrics.js';
import { IMAGE_CONTENT_TYPES } from './images/image-format.js';
import { RouteTable } from './common/http/route-table.js';
import { RateLimiter } from './common/auth/rate-limiter.js';
import { registerCompression } from './common/http/compression.js';
import { contentSecurityPolicy } from './common/http/content-security-policy.js';
import { endEventStreamsOnClose } from './common/http/sse.js';
import { answerClientError, answerUnknownExpectations, drainUnreadBody } from './common/http/wire-errors.js';
import { setupOpenApi } from './common/openapi/setup.js';
import type { AppConfig } from './config/app-config.js';

/** Media types whose bodies are parsed as JSON; anything else with a body is a 415. */
export const JSON_MEDIA_TYPES = [JSON_API_MEDIA_TYPE, 'application/json'];

export interface CreateAppOptions {
  /** Where structured logs go; stdout by default. Tests capture them here. */
  logStream?: NodeJS.WritableStream;
  /**
   * On shutdown, how long the listener stays open answering 503 (`Connection: close`) before it closes.
   * Keep-alive clients then hang up on a response instead of having an idle connection cut while they
   * send a request on it (ECONNRESET, and for a POST no way to know whether it was applied).
   * main.ts sets it; tests close at once.
   */
  shutdownDrainMs?: number;
}

/**
 * Knows when the application starts shutting down: Nest calls beforeClose() first, before the
 * shutdown hooks, and close() once they ran. From then on the onRequest hook in createApp answers
 * new requests with a 503 errors document (Fastify's and Nest's own return503OnClosing answer with a
 * non-JSON:API body, so they are off). In-flight requests finish: Fastify's close() waits for them.
 */
class ServiceFastifyAdapter extends FastifyAdapter {
  closing = false;
  drainMs = 0;

  override beforeClose(): void {
    this.closing = true;
    super.beforeClose();
  }

  override async close(): Promise<void> {
    this.closing = true;
    if (this.drainMs > 0) await new Promise((resolve) => setTimeout(resolve, this.drainMs));
    await super.close();
  }
}

const shuttingDown = () =>
  new ApiError(503, 'shutting_down', 'Service unavailable', 'The service is shutting down; retry the request.', undefined, { 'Retry-After': '1' });

/**
 * Builds the whole HTTP application (used by main.ts, the tests and the benchmark), so what is tested
 * is exactly what is served.
 */
export async function createApp(config: AppConfig, options: CreateAppOptions = {}): Promise<NestFastifyApplication> {
  // One logger for Fastify's lines and Nest's: one JSON shape (common/logging/logger.ts).
  const log = createLogger(config.logLevel, options.logStream);
  const logger = new NestPinoLogger(log);
  const adapter = new ServiceFastifyAdapter({
    // No Nest middleware is configured: the service's per-request steps are Fastify hooks, guards and the
    // interceptor. Without this, Nest registers @fastify/middie, whose onRequest hook runs on every request.
    skipMiddie: true,
    loggerInstance: log,
    // Fastify's own two lines per request are off: observeRequests writes one access line instead.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    bodyLimit: config.bodyLimitBytes,
    requestTimeout: config.requestTimeoutMs,
    // Socket inactivity (slow or stalled clients, idle keep-alive connections): the socket is closed.
    connectionTimeout: config.idleTimeoutMs,
    keepAliveTimeout: Math.min(72_000, config.idleTimeoutMs),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // The client's X-Request-Id when sane, else a new one (request-id.ts); echoed by the onRequest hook.
    requestIdHeader: false,
    genReqId: (request: { headers: Record<string, string | string[] | undefined> }) => requestIdFrom(request.headers['x-request-id']),
    // Replaced by the closing check in the onRequest hook below (JSON:API body).
    return503OnClosing: false,
    // Failures before routing and below it answer with the same errors document as everything else: the
    // router's (a bad percent-encoding, an overlong path parameter; no onRequest hook runs for them) and
    // the HTTP parser's (wire-errors.ts).
    frameworkErrors: (error: Error, request: FastifyRequest, reply: FastifyReply) => {
      reply.header('x-request-id', request.id);
      sendError(reply, request, error, logger);
    },
    clientErrorHandler: answerClientError,
  });
  adapter.drainMs = options.shutdownDrainMs ?? 0;
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.register(config), adapter, {
    logger,
    abortOnError: false,
    bodyParser: false,
  });
  const fastify = app.getHttpAdapter().getInstance() as unknown as FastifyInstance;
  const routes = new RouteTable();
  fastify.addHook('onRoute', (route) => {
    routes.add(route.method, route.url);
    // A route that takes bigger bodies than the service's default says so in its config (@RouteConfig).
    const bodyLimit = (route.config as { bodyLimit?: unknown } | undefined)?.bodyLimit;
    if (typeof bodyLimit === 'number') route.bodyLimit = bodyLimit;
  });
  configureBodyParsers(fastify, config);
  await registerCompression(fastify);
  await app.get(RateLimiter).register(fastify);
  // Callback-style hooks: they run on every request, and an async hook costs a promise and a microtask
  // turn each even when it has nothing to wait for.
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (!adapter.closing) return done();
    reply.header('connection', 'close');
    sendError(reply, request, shuttingDown(), logger);
  });
  const metrics = app.get(Metrics);
  observeRequests(fastify, [metrics.observeRequest]);
  answerUnknownExpectations(fastify.server);
  endEventStreamsOnClose(fastify);
  fastify.addHook('onSend', (request, reply, payload, done) => {
    // Fastify appended `; charset=utf-8` to a JSON label: the answer goes out labelled as documented.
    const exact = exactMediaType(reply.getHeader('content-type'));
    if (exact !== undefined) reply.header('content-type', exact);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('content-security-policy', contentSecurityPolicy(request.routeOptions.url));
    if (request.raw.complete) return done(null, payload);
    // An answer decided before the body was read (413 from Content-Length, 415, …) goes out once the
    // client has finished sending, so it reaches the client and any proxy in front (see wire-errors.ts).
    drainUnreadBody(request.raw, config.bodyDrainLimitBytes).then(() => {
      if (!request.raw.complete) reply.header('connection', 'close');
      done(null, payload);
    }, done);
  });
  // Failures before a Nest handler runs (body parsing, limits) reach the same exception filter through
  // the adapter's own Fastify error handler, so they get the same errors document.

  app.useGlobalFilters(new JsonApiErrorFilter(logger, (request) => methodNotAllowed(routes, request)));
  app.useGlobalInterceptors(new EnvelopeInterceptor(config));
  if (config.corsOrigins.length > 0) {
    app.enableCors({
      origin: config.corsOrigins.includes('*') ? true : config.corsOrigins,
      allowedHeaders: ['Authorization', 'Content-Type', 'X-Organization', 'X-Twin', 'Idempotency-Key', 'Last-Event-ID', 'If-None-Match', 'If-Match'],
      exposedHeaders: ['Location', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'ETag', 'X-Request-Id'],
      methods: ['GET', 'POST', 'PATCH', 'DELETE'],
    });
  }
  setupOpenApi(app);
  // SIGTERM/SIGINT: close (drain, finish in-flight requests, then the database) and exit 0; without
  // useProcessExit Nest re-raises the signal and the process dies of it after a clean shutdown.
  app.enableShutdownHooks([], { useProcessExit: true });
  await app.init();
  await fastify.ready();
  // The metrics listener and the deliveries run beside the API of every instance, not in CLI contexts
  // (which build the same modules).
  await app.get(MetricsServer).start();
  if (config.webhooks.worker) await app.get(WebhookWorker).start();
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
  fastify.addContentTypeParser(JSON_MEDIA_TYPES, { parseAs: 'string' }, (_request, body, done) => {
    // JSON:API DELETE bodies are optional: an empty body is no document, not a syntax error.
    if (body === '' || body === undefined) return done(null, undefined);
    // Plain JSON.parse: member names such as "__proto__" and "constructor" are client data, stored and
    // returned as sent (JSON.parse makes them own data properties and never touches a prototype).
    // Nothing downstream merges such objects by assignment: see AsSent in resource-body.ts.
    try {
      done(null, JSON.parse(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  // Image uploads are read as bytes and checked by the images module.
  fastify.addContentTypeParser([...IMAGE_CONTENT_TYPES], { parseAs: 'buffer', bodyLimit: config.imageLimitBytes }, (_request, body, done) => done(null, body));
}

