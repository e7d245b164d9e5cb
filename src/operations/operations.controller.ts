import { Body, Controller, Headers, HttpCode, Post, Res } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiBody, ApiConsumes, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ActsAsTwin } from '../common/auth/route-access.js';
import { Tenant, type Tenant as TenantContext } from '../common/auth/tenant.js';
import { RawBody } from '../common/json-api/envelope.js';
import { JsonText } from '../common/json-api/resource.js';
import { ApiErrors, ApiTenant } from '../common/openapi/docs.js';
import { readIdempotencyKey } from '../common/http/idempotency-key.js';
import { assertAtomicMediaType, ATOMIC_MEDIA_TYPE, MAX_OPERATIONS, OPERATIONS_BODY_LIMIT } from './atomic-document.js';
import { OPERATIONS_REQUEST, OPERATIONS_RESULTS } from './operations.openapi.js';
import { OperationsService } from './operations.service.js';

@ApiTags('operations')
@ApiTenant({ twin: 'optional' })
@ActsAsTwin('optional')
@Controller('operations')
export class OperationsController {
  constructor(private readonly operations: OperationsService) {}

  @Post()
  @HttpCode(200)
  @RouteConfig({ bodyLimit: OPERATIONS_BODY_LIMIT })
  @ApiOperation({
    summary: 'Many changes of events and twins, all or nothing (JSON:API Atomic Operations)',
    description: [
      `Up to ${MAX_OPERATIONS} operations in one transaction, applied in order: \`add\`, \`update\` and \`remove\` of events (the \`X-Twin\``,
      'timeline, by the rules of `/events/`) and `add` and `update` of twins (the caller\'s organization, by the rules of `/my/twins/`).',
      'Content-Type must be `application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"` (415 otherwise); the body may be 5 MiB',
      '(413 past it). The answer lists one result per operation, in order. When an operation fails, nothing of the batch is stored and',
      'the answer is that operation\'s error (its status; `source.pointer` under `/atomic:operations/<n>`). New resources may carry',
      'the id the client chose (`data.id`, a UUID; 409 `id_exists` when taken, also by an earlier operation of the batch); `lid` is not',
      'supported. With `Idempotency-Key` (and `X-Twin`, whose keys they share) a retried batch answers its first answer again,',
      'with `Idempotent-Replayed: true`; another batch under the same key is a 422. Each stored change reaches the event stream and',
      'webhooks like a single request\'s.',
    ].join('\n'),
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
    description: '1–255 printable ASCII characters; makes retrying a batch safe. Needs `X-Twin`.',
  })
  @ApiConsumes(ATOMIC_MEDIA_TYPE)
  @ApiBody({ schema: OPERATIONS_REQUEST.schema, description: 'An atomic operations document.', examples: OPERATIONS_REQUEST.examples })
  @ApiResponse({
    status: 200,
    description: '`{"atomic:results": [...]}`, one result per operation.',
    headers: { 'Idempotent-Replayed': { description: '`true` on a replay; absent otherwise.', schema: { type: 'string', enum: ['true'] } } },
    content: { [ATOMIC_MEDIA_TYPE]: { schema: OPERATIONS_RESULTS.schema, example: OPERATIONS_RESULTS.example } },
  })
  @ApiErrors({
    400: '`invalid_document`: a malformed document or operation (`source.pointer`, under `/atomic:operations/<n>` for an operation); `invalid_header`: a tenant header, a malformed `Idempotency-Key`, or an event operation without `X-Twin`.',
    403: '`forbidden`: a tenant header, or an operation the batch does not allow (removing a twin).',
    404: '`not_found`: an `update` or `remove` of an event or twin that is not there (`source.pointer` `/atomic:operations/<n>`).',
    409: '`type_mismatch`, `id_mismatch`, `id_exists` of operation `<n>`; `conflict`: a batch with the same `Idempotency-Key` is still unfinished.',
    413: '`payload_too_large`: the body is over 5 MiB.',
    415: '`unsupported_media_type`: the Content-Type does not name the atomic extension.',
    422: '`idempotency_key_reused`: the `Idempotency-Key` was used with another batch.',
  })
  async run(
    @Tenant() tenant: TenantContext,
    @Headers('content-type') contentType: string | undefined,
    @Headers('idempotency-key') idempotencyKey: string | string[] | undefined,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    assertAtomicMediaType(contentType);
    const { results, replayed } = await this.operations.run(tenant, body, readIdempotencyKey(idempotencyKey));
    reply.header('content-type', ATOMIC_MEDIA_TYPE);
    if (replayed) reply.header('idempotent-replayed', 'true');
    return new RawBody(results instanceof JsonText ? results.text : results);
  }
}
