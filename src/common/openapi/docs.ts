import type { RepresentationOffer } from '../json-api/representation.js';
import { applyDecorators } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiHeader,
  ApiQuery,
  ApiResponse,
  ApiSecurity,
  type HeadersObject,
  type ReferenceObject,
  type SchemaObject,
} from '@nestjs/swagger';
import { JSON_API_MEDIA_TYPE } from '../json-api/resource.js';
import type { PageDocs, QueryDeclaration, QueryParameters } from '../json-api/query.js';
import { ERROR_DOCUMENT, type DocumentSpec } from './schemas.js';

/** Names of the security schemes declared in the OpenAPI document (see setupOpenApi). */
export const SECURITY = { token: 'Token', organization: 'Organization', twin: 'Twin', admin: 'AdminToken' } as const;

/** What request bodies may be labelled (app.factory's body parsers); anything else with a body is a 415. */
const REQUEST_MEDIA_TYPES = [JSON_API_MEDIA_TYPE, 'application/json'];

/**
 * The IETF draft rate-limit fields (common/auth/rate-limiter.ts) on every answer counted against a
 * token: declared once in `components.headers` (setupOpenApi), referenced by the answers that carry them.
 */
export const RATE_LIMIT_HEADERS: HeadersObject = {
  'RateLimit-Policy': {
    description:
      'The per-token quota, as in draft-ietf-httpapi-ratelimit-headers: `"token";q=<RATE_LIMIT_MAX>;w=<window in seconds>`. Absent when rate limiting is off (`RATE_LIMIT_MAX=0`).',
    schema: { type: 'string', pattern: '^"token";q=\\d+;w=\\d+$', example: '"token";q=6000;w=60' },
  },
  RateLimit: {
    description:
      'What is left of the token\'s quota: `"token";r=<requests remaining>;t=<seconds until the window resets>`. Absent when rate limiting is off.',
    schema: { type: 'string', pattern: '^"token";r=\\d+;t=\\d+$', example: '"token";r=5999;t=60' },
  },
};
export const RATE_LIMIT_HEADER_REFS: HeadersObject = Object.fromEntries(Object.keys(RATE_LIMIT_HEADERS).map((name) => [name, { $ref: `#/components/headers/${name}` }]));

/** The response headers some errors carry. */
const ERROR_HEADERS: Record<number, HeadersObject> = {
  401: { 'WWW-Authenticate': { description: 'Always `Token`.', schema: { type: 'string', enum: ['Token'] } } },
  405: { Allow: { description: 'The methods the path has, e.g. `PATCH`.', schema: { type: 'string' } } },
  429: { 'Retry-After': { description: 'Seconds until the rate-limit window ends.', schema: { type: 'integer', minimum: 1 } }, ...RATE_LIMIT_HEADER_REFS },
  503: { 'Retry-After': { description: 'Seconds to wait before retrying (1).', schema: { type: 'integer', minimum: 0 } } },
};

/** Default meaning of a route's error status; routes say more where they can. */
const ERROR_MEANINGS: Record<number, string> = {
  400: '`invalid_document` (`source.pointer`), `invalid_parameter` (`source.parameter`) or `invalid_header` (`source.header`).',
  401: '`not_authenticated`: missing, malformed, unknown, revoked or expired token.',
  403: '`forbidden`: an organization the account is not a member of, or a twin outside the selected organization (`source.header`).',
  404: '`not_found`: no such resource visible to the caller (a path id that is not a UUID included), or a page past the last one.',
  409: '`type_mismatch` / `id_mismatch` (`source.pointer`), or a state that forbids the change.',
  413: '`payload_too_large`: the request body is over the size limit.',
  415: '`unsupported_media_type`: the request body is not `application/vnd.api+json` or `application/json`.',
  422: 'Semantically invalid request.',
};

/** A JSON:API errors document as the answer of `status`. */
export const errorResponse = (status: number, description = ERROR_MEANINGS[status] ?? 'Error') => ({
  description,
  ...(ERROR_HEADERS[status] ? { headers: ERROR_HEADERS[status] } : {}),
  content: { [JSON_API_MEDIA_TYPE]: { schema: ERROR_DOCUMENT } },
});

/**
 * Documents the JSON:API errors a route's own code can answer with: statuses alone take the default
 * meaning, `{409: '…'}` says what it means on this route. Failures of the HTTP layer that every route
 * shares (429, 5xx, 413/415 for bodies, 414 for path ids, …) are added by setupOpenApi.
 */
export function ApiErrors(...specs: (number | Partial<Record<number, string>>)[]) {
  const described = new Map<number, string | undefined>();
  for (const spec of specs) {
    if (typeof spec === 'number') described.set(spec, described.get(spec));
    else for (const [status, text] of Object.entries(spec)) described.set(Number(status), text);
  }
  return applyDecorators(
    ...[...described.entries()].sort(([a], [b]) => a - b).map(([status, description]) => ApiResponse({ status, ...errorResponse(status, description) })),
  );
}

/** A write that honours If-Match (common/http/conditional.ts): the header, and its 412. */
export function ApiIfMatch() {
  return applyDecorators(
    ApiHeader({
      name: 'If-Match',
      required: false,
      schema: { type: 'string' },
      description: 'The `ETag` the change is based on (any representation of the resource: the tag of a sparse GET names the same version), or `*`. Without it, the write is unconditional.',
    }),
    ApiErrors({ 412: '`precondition_failed`: the resource changed since the `If-Match` tag (`source.header`); nothing was changed.' }),
  );
}

/** Routes used within an organization: token + X-Organization (+ X-Twin when acting as a twin). */
export function ApiTenant(options: { twin?: 'required' | 'optional'; organizationOptional?: boolean } = {}) {
  const requirement: Record<string, string[]> = { [SECURITY.token]: [] };
  if (!options.organizationOptional) requirement[SECURITY.organization] = [];
  if (options.twin === 'required') requirement[SECURITY.twin] = [];
  const header = options.twin === 'required' ? '`X-Organization` or `X-Twin`' : options.twin === 'optional' ? '`X-Organization` or a given `X-Twin`' : '`X-Organization`';
  return applyDecorators(
    ApiSecurity(requirement),
    ApiErrors({
      400: `\`invalid_header\`: ${header} missing or not a UUID (\`source.header\`); \`invalid_parameter\`: an unknown, repeated or malformed query parameter (\`source.parameter\`).`,
      401: ERROR_MEANINGS[401],
      403: `\`forbidden\`: ${options.twin ? 'an `X-Organization` the account is not a member of, or an `X-Twin` outside that organization' : 'an `X-Organization` the account is not a member of'} (\`source.header\`).`,
    }),
  );
}

/** A JSON:API document (or the contract's bare JSON objects) as the answer of `status`. */
export function ApiDocument(status: number, document: DocumentSpec, options: { description: string; headers?: HeadersObject }) {
  return ApiResponse({
    status,
    description: options.description,
    ...(options.headers ? { headers: options.headers } : {}),
    content: { [JSON_API_MEDIA_TYPE]: { schema: document.schema, example: document.example } },
  });
}

/**
 * A request body: a whole JSON:API document, as `application/vnd.api+json` or `application/json`, with
 * examples the service accepts (openapi-contract.e2e-spec.ts sends each of them).
 */
export function ApiRequestDocument(
  schema: ReferenceObject | SchemaObject,
  options: { description: string; examples: Record<string, { summary?: string; value: unknown }>; required?: boolean },
) {
  return applyDecorators(
    ApiConsumes(...REQUEST_MEDIA_TYPES),
    ApiBody({ schema, description: options.description, required: options.required ?? true, examples: options.examples }),
  );
}

/** `page_number` and `page_size` of a paginated list. */
function ApiPageQueries(options: PageDocs = {}) {
  const { defaultSize = 50, maxSize = 100 } = options;
  return applyDecorators(
    ApiQuery({ name: 'page_number', required: false, schema: { type: 'integer', minimum: 1, default: 1 }, description: 'From 1; a page past the last one is a 404.' }),
    ApiQuery({
      name: 'page_size',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: maxSize, default: defaultSize },
      description: options.description ?? `Default ${defaultSize}, at most ${maxSize} (PAGE_SIZE_DEFAULT / PAGE_SIZE_MAX).`,
    }),
  );
}

/** `page_after` and `page_before` of a list with keyset pages. */
function ApiCursorQueries() {
  const cursor = (name: string, from: string) =>
    ApiQuery({
      name,
      required: false,
      schema: { type: 'string' },
      description:
        `An opaque cursor from \`links.${from === 'start' ? 'next' : 'prev'}\`; empty: the ${from === 'start' ? 'first' : 'last'} page. Keyset pages have ` +
        '`links.first/last/prev/next` (prev/next null at the ends) and no count (`meta` absent); they stay exact under concurrent inserts. ' +
        'Not with `page_number` (400); an altered cursor, or one of another list or `sort`, is a 400.',
    });
  return applyDecorators(cursor('page_after', 'start'), cursor('page_before', 'end'));
}

/** `fields[<type>]`, `include` and `sort` as a route offers them (common/json-api/representation.ts). */
function ApiRepresentationQueries(offer: RepresentationOffer) {
  const decorators = Object.entries(offer.fields ?? {}).map(([type, members]) =>
    ApiQuery({
      name: `fields[${type}]`,
      required: false,
      schema: { type: 'string' },
      description: `Sparse fieldset: only these members of \`${type}\` resources (comma-separated; empty: none). Any of: ${members.map((m) => `\`${m}\``).join(', ')}.`,
    }),
  );
  if (offer.include) {
    decorators.push(
      ApiQuery({
        name: 'include',
        required: false,
        schema: { type: 'string' },
        description: `Related resources to add as \`included\` (compound document, each resource once; those the caller may not read are left out): ${offer.include.map((i) => `\`${i}\``).join(', ')}.`,
      }),
    );
  }
  if (offer.sort) {
    decorators.push(
      ApiQuery({
        name: 'sort',
        required: false,
        schema: { type: 'string' },
        description: `Order: comma-separated keys, \`-\` for descending; ties end on the id. Keys: ${offer.sort.map((k) => `\`${k}\``).join(', ')}.`,
      }),
    );
  }
  return applyDecorators(...decorators);
}

/** The OpenAPI parameters of a route's query string, from its declaration (common/json-api/query.ts). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any declaration: only its parameters and options are read
export function ApiQueryParameters(declaration: QueryDeclaration<any, boolean>) {
  const options = declaration.options;
  return applyDecorators(
    ...Object.entries(declaration.parameters as QueryParameters).map(([name, parameter]) =>
      ApiQuery({ name, required: false, schema: parameter.schema, description: parameter.description, example: parameter.example }),
    ),
    ...(options.paginated ? [ApiPageQueries(options.pageDocs)] : []),
    ...(options.paginated && options.cursor ? [ApiCursorQueries()] : []),
    ApiRepresentationQueries(options),
  );
}
