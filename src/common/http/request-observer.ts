import type { FastifyInstance, FastifyRequest } from 'fastify';
import { redactTokens } from '../logging/logger.js';

const LEVELS_ABOVE_INFO = new Set(['warn', 'error', 'fatal']);

/** What is known of a request once its answer went out (or its event stream ended). */
export interface ObservedRequest {
  method: string;
  /** The route template (`/twins/:id`), never the raw URL: one series per route, not per id. */
  route: string;
  status: number;
  durationMs: number;
}

/**
 * Marks a request whose access line onResponse wrote, so its response's close does not write another:
 * a property, where a WeakSet of the requests cost a weak-table entry per request for the collector.
 */
const REPORTED = Symbol('access line written');
type ReportedRequest = FastifyRequest & { [REPORTED]?: true };

/** The route template a request matched; `unmatched` for 404s of unknown paths (and wire-level failures). */
export const routeOf = (request: FastifyRequest): string => request.routeOptions?.url ?? 'unmatched';

/**
 * One access line per request at `info` (method, route template, status, duration, request id) and a
 * callback for the metrics, from one hook. Event streams are hijacked replies, for which Fastify runs
 * no onResponse hook: theirs is taken when the response closes, with the stream's whole duration.
 * At `debug` the line also names the URL (tokens in it masked).
 */
export function observeRequests(fastify: FastifyInstance, observers: ((observed: ObservedRequest) => void)[]): void {
  const report = (request: FastifyRequest, status: number, durationMs: number) => {
    const observed: ObservedRequest = { method: request.method, route: routeOf(request), status, durationMs };
    for (const observer of observers) observer(observed);
    const level = request.log.level;
    if (level === 'silent' || LEVELS_ABOVE_INFO.has(level)) return;
    const url = level === 'debug' || level === 'trace' ? { url: redactTokens(request.url) } : undefined;
    request.log.info({ method: observed.method, route: observed.route, status, durationMs: Math.round(durationMs * 10) / 10, ...url }, 'request');
  };
  fastify.addHook('onResponse', (request, reply, done) => {
    (request as ReportedRequest)[REPORTED] = true;
    report(request, reply.statusCode, reply.elapsedTime);
    done();
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    // A hijacked reply counts as sent but gets no onResponse; a request whose client went away before
    // any answer is not sent, and is no access line.
    // (`on`, not `once`: a response closes once, and `once` wraps every listener.)
    reply.raw.on('close', () => {
      if ((request as ReportedRequest)[REPORTED] !== true && reply.sent) report(request, reply.raw.statusCode, reply.elapsedTime);
    });
    done();
  });
}
