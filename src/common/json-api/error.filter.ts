import { ArgumentsHost, Catch, ExceptionFilter, NotFoundException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { mapError } from './error-mapper.js';
import { JSON_API_MEDIA_TYPE } from './resource.js';

interface ErrorLogger {
  error(message: unknown, ...rest: unknown[]): void;
}

/**
 * Sends the errors document for anything a handler, guard, pipe or interceptor throws. An unmatched
 * route is first offered to `whenUnrouted`, which turns a known path with the wrong method into 405.
 */
@Catch()
export class JsonApiErrorFilter implements ExceptionFilter {
  constructor(
    private readonly logger: ErrorLogger,
    private readonly whenUnrouted: (request: FastifyRequest) => Error | undefined = () => undefined,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const unrouted = exception instanceof NotFoundException && !request.routeOptions?.url ? this.whenUnrouted(request) : undefined;
    sendError(reply, request, unrouted ?? exception, this.logger);
  }
}

export function sendError(reply: FastifyReply, request: FastifyRequest, exception: unknown, logger: ErrorLogger): void {
  if (clientHungUp(request, exception)) return;
  const mapped = mapError(exception);
  if (mapped.unexpected) {
    const err = exception instanceof Error ? exception : new Error(String(exception));
    logger.error(`request ${request.id} ${request.method} ${request.routeOptions?.url ?? request.url.split('?')[0]} failed: ${err.message}`, err.stack);
  }
  if (reply.sent) return;
  // As bytes: Fastify labels JSON text `; charset=utf-8`, and errors of the router (a bad percent-encoding, an
  // overlong path segment) are sent without the hooks that take it back (app.factory.ts).
  reply.status(mapped.status).headers(mapped.headers).header('content-type', JSON_API_MEDIA_TYPE).send(Buffer.from(JSON.stringify(mapped.body)));
}

/**
 * The client hung up while sending its body (Node's "aborted", code ECONNRESET, and its socket gone):
 * nobody to answer, and no failure of the service, though its ECONNRESET would read as an unreachable
 * database. Only then: `request.raw.destroyed` alone is also true once a body was read to its end, and a
 * reset of a database connection must still answer 503.
 */
function clientHungUp(request: FastifyRequest, exception: unknown): boolean {
  const error = exception as { code?: unknown; message?: unknown } | undefined;
  return error?.code === 'ECONNRESET' && error.message === 'aborted' && request.raw.socket?.destroyed === true;
}
