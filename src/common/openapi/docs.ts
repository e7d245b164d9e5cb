import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, ApiSecurity, getSchemaPath } from '@nestjs/swagger';

/** Names of the security schemes declared in the OpenAPI document (see setupOpenApi). */
export const SECURITY = { token: 'Token', organization: 'Organization', twin: 'Twin', admin: 'AdminToken' } as const;

export class ErrorObjectDoc {
  status: string;
  code: string;
  title: string;
  detail: string;
  source?: { pointer?: string; parameter?: string; header?: string };
}

export const ERROR_DOCUMENT_SCHEMA = {
  type: 'object',
  required: ['errors'],
  properties: {
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['status', 'code', 'title', 'detail'],
        properties: {
          status: { type: 'string', example: '400' },
          code: { type: 'string', example: 'invalid_document' },
          title: { type: 'string', example: 'Invalid request document' },
          detail: { type: 'string', example: '"name" must be a string.' },
          source: {
            type: 'object',
            properties: { pointer: { type: 'string' }, parameter: { type: 'string' }, header: { type: 'string' } },
          },
        },
      },
    },
  },
};

const ERROR_MEANINGS: Record<number, string> = {
  400: 'Malformed document, query parameter or tenant header (`source` names which).',
  401: 'Missing, malformed, unknown, revoked or expired token (`WWW-Authenticate: Token`).',
  403: 'Organization the account is not a member of, or a twin outside the selected organization.',
  404: 'No such resource visible to the caller, or a page past the last one.',
  405: 'The path exists but not with this method.',
  409: 'Conflict: `type`/`id` mismatch, or a state that forbids the change.',
  413: 'Request body over the size limit.',
  415: 'Request body not `application/vnd.api+json` or `application/json`.',
  422: 'Semantically invalid request.',
  429: 'Rate limit for this token exceeded (`Retry-After` says when to retry).',
  503: 'The database is unreachable.',
};

/** Documents the JSON:API errors a route can answer with. */
export function ApiErrors(...statuses: number[]) {
  const all = [...new Set([...statuses, 429, 503])].sort();
  return applyDecorators(
    ...all.map((status) =>
      ApiResponse({ status, description: ERROR_MEANINGS[status] ?? 'Error', content: { 'application/vnd.api+json': { schema: ERROR_DOCUMENT_SCHEMA } } }),
    ),
  );
}

/** Routes used within an organization: token + X-Organization (+ X-Twin when acting as a twin). */
export function ApiTenant(options: { twin?: 'required' | 'optional'; organizationOptional?: boolean } = {}) {
  const requirement: Record<string, string[]> = { [SECURITY.token]: [] };
  if (!options.organizationOptional) requirement[SECURITY.organization] = [];
  if (options.twin === 'required') requirement[SECURITY.twin] = [];
  const decorators = [ApiSecurity(requirement)];
  const errors = options.twin ? [400, 401, 403] : options.organizationOptional ? [401] : [400, 401, 403];
  return applyDecorators(...decorators, ApiErrors(...errors));
}

export { ApiExtraModels, getSchemaPath };
