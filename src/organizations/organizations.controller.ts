import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { OrganizationOptional } from '../common/auth/route-access.js';
import { Caller, type RequestAuth } from '../common/auth/tenant.js';
import { UuidParam } from '../common/json-api/uuid-param.pipe.js';
import { ApiDocument, ApiErrors, ApiQueryParameters, ApiTenant } from '../common/openapi/docs.js';
import { ORGANIZATION_DOCUMENT, ORGANIZATION_PAGE } from './organization.openapi.js';
import { OrganizationsService } from './organizations.service.js';
import { ORGANIZATION_LIST_QUERY, ORGANIZATION_QUERY, type OrganizationListQuery, type OrganizationQuery } from './organization-query.js';

@ApiTags('organizations')
@Controller('organizations')
@OrganizationOptional()
@ApiTenant({ organizationOptional: true })
export class OrganizationsController {
  constructor(private readonly organizations: OrganizationsService) {}

  @Get()
  @ApiOperation({
    summary: "The caller's organizations",
    description: 'Every organization the account is a member of. `X-Organization` is optional here, so a client can discover its organizations before choosing one. Paginated with `page_number`/`page_size`.',
  })
  @ApiQueryParameters(ORGANIZATION_LIST_QUERY)
  @ApiDocument(200, ORGANIZATION_PAGE, { description: '`{links, data: [organization], meta: {pagination}}`' })
  @ApiErrors({
    400: '`invalid_header`: a given `X-Organization` that is not a UUID; `invalid_parameter`: an unknown, repeated or malformed query parameter.',
    403: '`forbidden`: a given `X-Organization` the account is not a member of (`source.header`).',
    404: '`not_found`: a page past the last one.',
  })
  list(@Caller() caller: RequestAuth, @Query(ORGANIZATION_LIST_QUERY) query: OrganizationListQuery) {
    return this.organizations.list(caller, query);
  }

  @Get(':organizationId')
  @ApiOperation({ summary: 'One organization of the caller', description: 'An organization the account is not a member of answers 404.' })
  @ApiQueryParameters(ORGANIZATION_QUERY)
  @ApiDocument(200, ORGANIZATION_DOCUMENT, { description: '`{data: organization}`' })
  @ApiErrors({
    400: '`invalid_header`: a given `X-Organization` that is not a UUID.',
    403: '`forbidden`: a given `X-Organization` the account is not a member of (`source.header`).',
    404: '`not_found`: not an organization the account is a member of.',
  })
  get(@Caller() caller: RequestAuth, @Param('organizationId', UuidParam) organizationId: string, @Query(ORGANIZATION_QUERY) query: OrganizationQuery) {
    return this.organizations.get(caller, organizationId, query.fields);
  }
}
