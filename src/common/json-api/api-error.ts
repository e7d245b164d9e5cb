/**
 * The one error type the service throws on purpose. Modules raise ApiError (through the factory
 * functions below); the error mapper turns it, and everything else, into a JSON:API errors document.
 */
export interface ErrorSource {
  /** JSON pointer into the request document, e.g. `/data/attributes/name`. */
  pointer?: string;
  /** Query parameter name. */
  parameter?: string;
  /** Request header name. */
  header?: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    readonly detail: string,
    readonly source?: ErrorSource,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

export const invalidDocument = (detail: string, pointer: string) =>
  new ApiError(400, 'invalid_document', 'Invalid request document', detail, { pointer });

export const invalidParameter = (parameter: string, detail: string) =>
  new ApiError(400, 'invalid_parameter', 'Invalid query parameter', detail, { parameter });

export const invalidHeader = (header: string, detail: string) =>
  new ApiError(400, 'invalid_header', 'Invalid request header', detail, { header });

export const unauthenticated = (detail: string) =>
  new ApiError(401, 'not_authenticated', 'Authentication required', detail, { header: 'Authorization' }, {
    'WWW-Authenticate': 'Token',
  });

export const forbidden = (detail: string, source?: ErrorSource) =>
  new ApiError(403, 'forbidden', 'Forbidden', detail, source);

export const notFound = (detail = 'The requested resource does not exist.') =>
  new ApiError(404, 'not_found', 'Not found', detail);

export const conflict = (detail: string, source?: ErrorSource, code = 'conflict') =>
  new ApiError(409, code, 'Conflict', detail, source);

/** A create under a client-chosen id that is taken (by anyone's resource: ids are global). */
export const idExists = (resource: string, id: string) => conflict(`A ${resource} with the id ${id} exists already.`, { pointer: '/data/id' }, 'id_exists');

export const unprocessable = (detail: string, source?: ErrorSource, code = 'unprocessable') =>
  new ApiError(422, code, 'Unprocessable request', detail, source);

export const tooManyRequests = (retryAfterSeconds: number) =>
  new ApiError(429, 'rate_limited', 'Too many requests', `Rate limit exceeded; retry in ${retryAfterSeconds} s.`, undefined, {
    'Retry-After': String(retryAfterSeconds),
  });

/** If-Match named a version the resource no longer has (or it is gone, for `*`): nothing was changed. */
export const preconditionFailed = (detail = 'The resource changed since the ETag given in If-Match: nothing was changed; GET it again.') =>
  new ApiError(412, 'precondition_failed', 'Precondition failed', detail, { header: 'If-Match' });
