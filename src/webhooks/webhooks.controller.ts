import { Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiExtraModels, ApiNoContentResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Tenant, type Tenant as TenantContext } from '../common/auth/tenant.js';
import { assertIdMatchesPath, ResourceBody, type ResourceDocument } from '../common/json-api/resource-body.js';
import { UuidParam } from '../common/json-api/uuid-param.pipe.js';
import { ApiDocument, ApiErrors, ApiQueryParameters, ApiRequestDocument, ApiTenant } from '../common/openapi/docs.js';
import { EXAMPLE_IDS } from '../common/openapi/example-ids.js';
import { CreateWebhookAttributes, UpdateWebhookAttributes } from './dto/webhook.dto.js';
import { WEBHOOK_EVENT_TYPES } from './webhook-events.js';
import {
  DELIVERY_CALLBACKS,
  DELIVERY_PAGE,
  WEBHOOK_CREATE_REQUEST,
  WEBHOOK_DOCUMENT,
  WEBHOOK_PAGE,
  WEBHOOK_SECRET_DOCUMENT,
  WEBHOOK_UPDATE_REQUEST,
} from './webhook.openapi.js';
import { ROTATE_SECRET_QUERY, WEBHOOK_LIST_QUERY, type RotateSecretQuery, type WebhookListQuery } from './webhook-query.js';
import { WebhooksService } from './webhooks.service.js';

const WHO =
  'Any member of the `X-Organization` organization manages its webhooks (the token and organization headers, as on every ' +
  "organization route); another organization's webhook answers 404, as if it did not exist.";
const NOT_FOUND = "`not_found`: no webhook of the `X-Organization` organization has this id (other organizations' included), or a page past the last one.";
const URL_ERRORS =
  '`invalid_document` (`source.pointer`): an unknown or invalid attribute; a `url` that is not `https`, carries credentials, does not resolve, ' +
  `or resolves to a private, loopback, link-local or metadata address; an event type other than ${WEBHOOK_EVENT_TYPES.join(', ')}. \`invalid_header\`: a tenant header.`;

@ApiTags('webhooks')
@ApiExtraModels(CreateWebhookAttributes, UpdateWebhookAttributes)
@ApiTenant()
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a webhook',
    description: `${WHO} The answer carries the signing \`secret\`, shown this once. Deliveries: see the callback and docs/WEBHOOKS.md.`,
    callbacks: DELIVERY_CALLBACKS,
  })
  @ApiRequestDocument(WEBHOOK_CREATE_REQUEST.schema, { description: 'A webhooks document.', examples: WEBHOOK_CREATE_REQUEST.examples })
  @ApiDocument(201, WEBHOOK_SECRET_DOCUMENT, { description: '`{data: webhook}` with its `secret`' })
  @ApiErrors({ 400: URL_ERRORS, 403: '`client_generated_id`: the document has a `data.id`; `forbidden`: a tenant header (`source.header`).', 409: '`type_mismatch`: `data.type` is not `webhooks`.' })
  create(@Tenant() tenant: TenantContext, @ResourceBody({ type: 'webhooks', attributes: CreateWebhookAttributes }) document: ResourceDocument<CreateWebhookAttributes>) {
    return this.webhooks.create(tenant, document);
  }

  @Get()
  @ApiOperation({ summary: "The organization's webhooks", description: `${WHO} Oldest first, paginated with \`page_number\`/\`page_size\`; secrets are never listed.` })
  @ApiQueryParameters(WEBHOOK_LIST_QUERY)
  @ApiDocument(200, WEBHOOK_PAGE, { description: '`{links, data: [webhook], meta: {pagination}}`' })
  @ApiErrors({ 404: '`not_found`: a page past the last one.' })
  list(@Tenant() tenant: TenantContext, @Query(WEBHOOK_LIST_QUERY) query: WebhookListQuery) {
    return this.webhooks.list(tenant, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One webhook', description: WHO })
  @ApiParam({ name: 'id', example: EXAMPLE_IDS.webhooks })
  @ApiDocument(200, WEBHOOK_DOCUMENT, { description: '`{data: webhook}` (without its secret)' })
  @ApiErrors({ 404: NOT_FOUND })
  get(@Tenant() tenant: TenantContext, @Param('id', UuidParam) id: string) {
    return this.webhooks.get(tenant, id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Change a webhook', description: `${WHO} \`url\`, \`events\`, \`description\` and \`enabled\` change when given; a new \`url\` is checked like a new webhook's.` })
  @ApiParam({ name: 'id', example: EXAMPLE_IDS.webhooks })
  @ApiRequestDocument(WEBHOOK_UPDATE_REQUEST.schema, { description: 'A webhooks document with the changes.', examples: WEBHOOK_UPDATE_REQUEST.examples })
  @ApiDocument(200, WEBHOOK_DOCUMENT, { description: '`{data: webhook}` after the change' })
  @ApiErrors({ 400: URL_ERRORS, 404: NOT_FOUND, 409: '`type_mismatch` (`data.type` is not `webhooks`) or `id_mismatch` (`data.id` is not the path id).' })
  update(
    @Tenant() tenant: TenantContext,
    @Param('id', UuidParam) id: string,
    @ResourceBody({ type: 'webhooks', attributes: UpdateWebhookAttributes, id: 'required' }) document: ResourceDocument<UpdateWebhookAttributes>,
  ) {
    assertIdMatchesPath(document.id, id);
    return this.webhooks.update(tenant, id, document);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a webhook', description: `${WHO} What was queued for it and its delivery log go with it.` })
  @ApiParam({ name: 'id', example: EXAMPLE_IDS.webhooks })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors({ 404: NOT_FOUND })
  async delete(@Tenant() tenant: TenantContext, @Param('id', UuidParam) id: string): Promise<void> {
    await this.webhooks.remove(tenant, id);
  }

  @Get(':id/deliveries')
  @ApiOperation({
    summary: "A webhook's delivery attempts, newest first",
    description: `${WHO} Each attempt: the change's event type, the \`webhook-id\` of its delivery, the attempt number, the receiver's status code or the error, the duration and the time.`,
  })
  @ApiParam({ name: 'id', example: EXAMPLE_IDS.webhooks })
  @ApiQueryParameters(WEBHOOK_LIST_QUERY)
  @ApiDocument(200, DELIVERY_PAGE, { description: '`{links, data: [webhook-delivery], meta: {pagination}}`' })
  @ApiErrors({ 404: NOT_FOUND })
  deliveries(@Tenant() tenant: TenantContext, @Param('id', UuidParam) id: string, @Query(WEBHOOK_LIST_QUERY) query: WebhookListQuery) {
    return this.webhooks.deliveries(tenant, id, query);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({
    summary: "Replace a webhook's signing secret",
    description:
      `${WHO} The new secret is in the answer, shown this once, and signs every attempt from now on (queued retries included). ` +
      'The old one stops at once, or with `previous_secret_expires_in` keeps signing beside it until `previous-secret-expires` ' +
      '(`webhook-signature` then holds both signatures, space-separated, as Standard Webhooks allows). A rotation ends any earlier overlap.',
  })
  @ApiParam({ name: 'id', example: EXAMPLE_IDS.webhooks })
  @ApiQueryParameters(ROTATE_SECRET_QUERY)
  @ApiDocument(200, WEBHOOK_SECRET_DOCUMENT, { description: '`{data: webhook}` with its new `secret`' })
  @ApiErrors({ 400: '`invalid_parameter`: `previous_secret_expires_in` is not a number of seconds from 0 to 86400, or an unknown parameter.', 404: NOT_FOUND })
  rotateSecret(@Tenant() tenant: TenantContext, @Param('id', UuidParam) id: string, @Query(ROTATE_SECRET_QUERY) query: RotateSecretQuery) {
    return this.webhooks.rotateSecret(tenant, id, query.previous_secret_expires_in ?? 0);
  }
}
