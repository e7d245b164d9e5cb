import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { OrganizationOptional } from '../common/auth/route-access.js';
import { Caller, type RequestAuth } from '../common/auth/tenant.js';
import { UuidParam } from '../common/json-api/uuid-param.pipe.js';
import { ApiErrors, ApiTenant } from '../common/openapi/docs.js';
import { OrganizationsService } from './organizations.service.js';

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
  @ApiQuery({ name: 'page_number', required: false, type: Number })
  @ApiQuery({ name: 'page_size', required: false, type: Number })
  @ApiOkResponse({ description: '`{links, data: [organization], meta: {pagination}}`' })
  @ApiErrors(400, 404)
  list(@Caller() caller: RequestAuth, @Query() query: Record<string, unknown>) {
    return this.organizations.list(caller, query);
  }

  @Get(':organizationId')
  @ApiOperation({ summary: 'One organization of the caller', description: 'An organization the account is not a member of answers 404.' })
  @ApiOkResponse({ description: '`{data: organization}`' })
  @ApiErrors(404)
  get(@Caller() caller: RequestAuth, @Param('organizationId', UuidParam) organizationId: string) {
    return this.organizations.get(caller, organizationId);
  }
}
