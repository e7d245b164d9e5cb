import { Controller, Delete, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AdminApi } from '../common/auth/route-access.js';
import { readToMany, ResourceBody, type ResourceDocument } from '../common/json-api/resource-body.js';
import { UuidParam } from '../common/json-api/uuid-param.pipe.js';
import { ApiErrors, SECURITY } from '../common/openapi/docs.js';
import { AdminService } from './admin.service.js';
import { AccountAttributes, OrganizationAttributes, TokenAttributes } from './dto/admin.dto.js';

const body = (type: string, attributes: Record<string, unknown>, relationships?: Record<string, unknown>) => ({
  schema: { example: { data: { type, attributes, ...(relationships ? { relationships } : {}) } } },
});

@ApiTags('admin')
@ApiSecurity(SECURITY.admin)
@ApiErrors(400, 401, 403)
@AdminApi()
@Controller('admin')
export class AdminController {
  constructor(private readonly admin: AdminService) {}

  @Post('organizations')
  @ApiOperation({ summary: 'Create an organization', description: 'Operators only: `Authorization: Token <ADMIN_TOKEN>`. 403 when ADMIN_TOKEN is not configured.' })
  @ApiBody(body('organizations', { name: 'Acme Outdoors' }))
  @ApiCreatedResponse({ description: '`{data: organization}`' })
  @ApiErrors(409, 415)
  createOrganization(@ResourceBody({ type: 'organizations', attributes: OrganizationAttributes }) document: ResourceDocument<OrganizationAttributes>) {
    return this.admin.createOrganization(document.attributes.name);
  }

  @Post('accounts')
  @ApiOperation({ summary: 'Create an account, member of the given organizations' })
  @ApiBody(body('accounts', { name: 'Ada' }, { organizations: { data: [{ type: 'organizations', id: '<ORG_ID>' }] } }))
  @ApiCreatedResponse({ description: '`{data: account}` with its `organizations` relationship' })
  @ApiErrors(404, 409, 415)
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
  @ApiBody({ required: false, ...body('tokens', { expires: '2027-01-01T00:00:00Z' }) })
  @ApiCreatedResponse({ description: '`{data: {type: "tokens", id, attributes: {token, created, expires}}}`' })
  @ApiErrors(404, 409, 415)
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
  @ApiErrors(404)
  async revokeToken(@Param('tokenId', UuidParam) tokenId: string, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    await this.admin.revokeToken(tokenId);
    reply.status(204);
  }
}
