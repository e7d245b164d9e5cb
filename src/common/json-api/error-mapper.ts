import { HttpException } from '@nestjs/common';
import { anyCause } from '../../database/driver-errors.js';
import { NOT_ANSWERING_MESSAGE } from '../../database/liveness.js';
import { READ_TIMEOUT_MESSAGE } from '../../database/pooled-queries.js';
import { ApiError, ErrorSource } from './api-error.js';

/** One error object of a JSON:API errors document. */
export interface ErrorObject {
  status: string;
  code: string;
  title: string;
  detail: string;
  source?: ErrorSource;
}

export interface MappedError {
  status: number;
  headers: Record<string, string>;
  body: { errors: ErrorObject[] };
  /** True for failures the caller did not cause: these are logged with their stack. */
  unexpected: boolean;
}

const TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Authentication required',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  406: 'Not acceptable',
  408: 'Request timeout',
  409: 'Conflict',
  413: 'Payload too large',
  414: 'URI too long',
  415: 'Unsupported media type',
  417: 'Expectation failed',
  422: 'Unprocessable request',
  431: 'Request header fields too large',
  429: 'Too many requests',
  500: 'Internal server error',
  503: 'Service unavailable',
};

/** Fastify's own failures (body parsing, limits) that happen before a route handler runs. */
const FASTIFY_ERRORS: Record<string, { status: number; code: string; detail: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'unsupported_media_type',
    detail: 'Request bodies must be application/vnd.api+json or application/json.',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'payload_too_large', detail: 'The request body is too large.' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: 'invalid_content_length',
    detail: 'The Content-Length header does not match the body.',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'invalid_json', detail: 'The request body is empty.' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'invalid_json', detail: 'The request body is not valid JSON.' },
  FST_ERR_BAD_URL: { status: 400, code: 'bad_url', detail: 'The request URL is malformed (an invalid percent-encoding).' },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, code: 'uri_too_long', detail: 'A path segment of the request URL is too long.' },
  FST_ERR_ASYNC_CONSTRAINT: { status: 400, code: 'bad_request', detail: 'The request could not be routed.' },
  // Node's HTTP parser, before Fastify sees a request (see wire-errors.ts).
  HPE_HEADER_OVERFLOW: { status: 431, code: 'headers_too_large', detail: 'The request headers are too large.' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'request_timeout', detail: 'The request was not received in time.' },
  ERR_HTTP_EXPECTATION_FAILED: { status: 417, code: 'expectation_failed', detail: 'Only the expectation "100-continue" is supported.' },
};

const HTTP_CODES: Record<number, string> = {
  400: 'bad_request',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/**
 * SQLSTATE classes and driver messages that mean "the database cannot be reached right now"; pg's
 * connect timeout (connect-bounded-client.ts) ends the attempt with a bare "timeout expired".
 */
// Connection failures, too many connections, server shutting down, statement timeout (57014);
// not 08P01 (protocol violation: a bug).
const UNAVAILABLE_SQLSTATES = /^(0800[01346]|53300|57P0[1-3]|57014)$/;
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);
const UNAVAILABLE_MESSAGES = new RegExp(
  `Connection terminated|Client has encountered a connection error|Connection is not established|connect ECONNREFUSED|the database system is (starting up|shutting down)|Cannot use a pool after calling end|^timeout expired$|${READ_TIMEOUT_MESSAGE}|${NOT_ANSWERING_MESSAGE}`,
  'i',
);

/**
 * SQLSTATEs of a transaction PostgreSQL rolled back because it collided with another one: a deadlock
 * (40P01; PostgreSQL aborts one of the two after deadlock_timeout) or a serialization failure (40001).
 * Nothing of the request was stored, and the same request sent again normally succeeds.
 */
const CONFLICT_SQLSTATES = new Set(['40P01', '40001']);

export const isTransactionConflict = (error: unknown): boolean =>
  anyCause(error, ({ code }) => typeof code === 'string' && CONFLICT_SQLSTATES.has(code));

/**
 * pg-pool's answer when no pooled connection became free within DATABASE_POOL_WAIT_MS: the database
 * answers, but every connection is taken (a burst, slow statements). Not an unreachable database.
 */
const POOL_WAIT_MESSAGE = 'timeout exceeded when trying to connect';

export const isDatabaseBusy = (error: unknown): boolean => anyCause(error, ({ message }) => message === POOL_WAIT_MESSAGE);

export const isDatabaseUnavailable = (error: unknown): boolean =>
  anyCause(
    error,
    ({ code, message }) =>
      (typeof code === 'string' && (UNAVAILABLE_ERRNOS.has(code) || UNAVAILABLE_SQLSTATES.test(code))) ||
      (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message)),
  );

function single(status: number, code: string, detail: string, source?: ErrorSource, headers: Record<string, string> = {}, unexpected = false): MappedError {
  const error: ErrorObject = { status: String(status), code, title: TITLES[status] ?? 'Error', detail };
  if (source) error.source = source;
  return { status, headers, body: { errors: [error] }, unexpected };
}

/**
 * The one place that decides what a failure looks like on the wire. Both the Nest exception filter
 * and Fastify's error handler (for failures before routing) call it.
 */
export function mapError(error: unknown): MappedError {
  if (error instanceof ApiError) {
    const mapped = single(error.status, error.code, error.detail, error.source, error.headers);
    mapped.body.errors[0].title = error.title;
    return mapped;
  }
  if (error instanceof AggregateApiError) {
    return {
      status: error.status,
      headers: {},
      body: {
        errors: error.errors.map((e) => ({
          status: String(e.status),
          code: e.code,
          title: e.title,
          detail: e.detail,
          ...(e.source ? { source: e.source } : {}),
        })),
      },
      unexpected: false,
    };
  }
  if (isDatabaseBusy(error)) {
    return single(503, 'database_busy', 'Every database connection is in use; try again shortly.', undefined, { 'Retry-After': '1' });
  }
  if (isDatabaseUnavailable(error)) {
    return single(503, 'database_unavailable', 'The database is unreachable; try again shortly.', undefined, { 'Retry-After': '1' }, true);
  }
  if (isTransactionConflict(error)) {
    // Logged (unexpected): a deadlock between the service's own statements is worth an operator's look.
    return single(503, 'transaction_conflict', 'The request collided with another change and was rolled back; nothing was stored. Send it again.', undefined, { 'Retry-After': '1' }, true);
  }
  if (error instanceof HttpException) {
    // Nest wraps Fastify's body-parsing failures; the original (with its FST_ code) is the cause.
    if (error.cause && error.cause !== error) {
      const inner = mapError(error.cause);
      if (inner.status !== 500) return inner;
    }
    const status = error.getStatus();
    const code = HTTP_CODES[status] ?? `http_${status}`;
    const detail = status >= 500 ? 'The server failed to handle the request.' : httpExceptionDetail(error);
    return single(status, code, detail, undefined, {}, status >= 500);
  }
  const fastifyCode = (error as { code?: unknown })?.code;
  if (typeof fastifyCode === 'string' && FASTIFY_ERRORS[fastifyCode]) {
    const known = FASTIFY_ERRORS[fastifyCode];
    return single(known.status, known.code, known.detail);
  }
  if (error instanceof SyntaxError) {
    return single(400, 'invalid_json', 'The request body is not valid JSON.');
  }
  const statusCode = (error as { statusCode?: unknown })?.statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return single(statusCode, `http_${statusCode}`, TITLES[statusCode] ?? 'The request was refused.');
  }
  return single(500, 'internal_error', 'The server failed to handle the request.', undefined, {}, true);
}

function httpExceptionDetail(error: HttpException): string {
  const response = error.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (typeof message === 'string') return message;
  if (Array.isArray(message)) return message.join('; ');
  return error.message;
}

/** Several independent problems with one request, reported together (e.g. every invalid attribute). */
export class AggregateApiError extends Error {
  constructor(
    readonly status: number,
    readonly errors: ApiError[],
  ) {
    super(errors.map((e) => e.detail).join('; '));
  }
}
