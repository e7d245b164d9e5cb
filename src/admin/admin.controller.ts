import { Controller, Delete, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiExtraModels, ApiNoContentResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AdminApi } from '../common/auth/route-access.js';
import { readToMany, ResourceBody, type ResourceDocument } from '../common/json-api/resource-body.js';
import { UuidParam } from '../common/json-api/uuid-param.pipe.js';
import { ApiDocument, ApiErrors, ApiRequestDocument, SECURITY } from '../common/openapi/docs.js';
import {
  ACCOUNT_CREATE_REQUEST,
  ACCOUNT_DOCUMENT,
  ORGANIZATION_CREATE_REQUEST,
  ORGANIZATION_DOCUMENT,
  TOKEN_CREATE_REQUEST,
  TOKEN_DOCUMENT,
} from './admin.openapi.js';
import { AdminService } from './admin.service.js';
import { AccountAttributes, OrganizationAttributes, TokenAttributes } from './dto/admin.dto.js';

const CREATE_ERRORS = {
  400: '`invalid_document`: an unknown or invalid attribute (`source.pointer`).',
  403: '`admin_disabled`: the service runs without ADMIN_TOKEN; `client_generated_id`: the document has a `data.id`.',
  409: '`type_mismatch`: `data.type` is not the route\'s type.',
};

@ApiTags('admin')
@ApiExtraModels(OrganizationAttributes, AccountAttributes, TokenAttributes)
@ApiSecurity(SECURITY.admin)
@ApiErrors({
  401: '`not_authenticated`: a missing or wrong admin token (user tokens included).',
  403: '`admin_disabled`: the service runs without ADMIN_TOKEN.',
})
@AdminApi()
@Controller('admin')
export class AdminController {
  constructor(private readonly admin: AdminService) {}

  @Post('organizations')
  @ApiOperation({ summary: 'Create an organization', description: 'Operators only: `Authorization: Token <ADMIN_TOKEN>`. 403 when ADMIN_TOKEN is not configured.' })
  @ApiRequestDocument(ORGANIZATION_CREATE_REQUEST.schema, { description: 'An organizations document.', examples: ORGANIZATION_CREATE_REQUEST.examples })
  @ApiDocument(201, ORGANIZATION_DOCUMENT, { description: '`{data: organization}`' })
  @ApiErrors(CREATE_ERRORS)
  createOrganization(@ResourceBody({ type: 'organizations', attributes: OrganizationAttributes }) document: ResourceDocument<OrganizationAttributes>) {
    return this.admin.createOrganization(document.attributes.name);
  }

  @Post('accounts')
  @ApiOperation({
    summary: 'Create an account, member of the given organizations',
    description: 'An account starts with no twin and no token: mint one with `POST /admin/accounts/<ACCOUNT_ID>/tokens/`. An unknown organization is a 404 whose pointer names it.',
  })
  @ApiRequestDocument(ACCOUNT_CREATE_REQUEST.schema, { description: 'An accounts document.', examples: ACCOUNT_CREATE_REQUEST.examples })
  @ApiDocument(201, ACCOUNT_DOCUMENT, { description: '`{data: account}` with its `organizations` relationship' })
  @ApiErrors(CREATE_ERRORS, { 404: '`not_found`: an organization that does not exist (`source.pointer` names it).' })
  createAccount(
    @ResourceBody({ type: 'accounts', attributes: AccountAttributes, relationships: ['organizations'] }) document: ResourceDocument<AccountAttributes>,
  ) {
    return this.admin.createAccount(document.attributes.name, readToMany(document, 'organizations', 'organizations'));
  }

  @Post('accounts/:accountId/tokens')
  @ApiOperation({
    summary: 'Mint an access token for an account',
    description: 'The plaintext `token` is returned only in this response; the service keeps its SHA-256. The body is optional.',
  })
  @ApiRequestDocument(TOKEN_CREATE_REQUEST.schema, { description: 'Optional.', required: false, examples: TOKEN_CREATE_REQUEST.examples })
  @ApiDocument(201, TOKEN_DOCUMENT, { description: '`{data: {type: "tokens", id, attributes: {token, created, expires}, relationships: {account}}}`' })
  @ApiErrors(CREATE_ERRORS, {
    400: '`invalid_document`: an unknown or invalid attribute, an `expires` that is not in the future (`source.pointer`).',
    404: '`not_found`: no such account.',
  })
  createToken(
    @Param('accountId', UuidParam) accountId: string,
    @ResourceBody({ type: 'tokens', attributes: TokenAttributes, optional: true }) document: ResourceDocument<TokenAttributes> | undefined,
  ) {
    return this.admin.createToken(accountId, document?.attributes.expires);
  }

  @Delete('tokens/:tokenId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke a token', description: 'It stops working with the next request.' })
  @ApiNoContentResponse({ description: 'Revoked.' })
  @ApiErrors({ 404: '`not_found`: no such live token (unknown, or already revoked).' })
  async revokeToken(@Param('tokenId', UuidParam) tokenId: string, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    await this.admin.revokeToken(tokenId);
    reply.status(204);
  }
}
