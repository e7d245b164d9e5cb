import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ActsAsTwin } from '../common/auth/route-access.js';
import { Tenant, type TwinTenant } from '../common/auth/tenant.js';
import { ApiDocument, ApiTenant } from '../common/openapi/docs.js';
import { TOTAL_REVENUE } from './revenue.openapi.js';
import { RevenueService } from './revenue.service.js';
import { NO_QUERY_PARAMETERS } from '../common/json-api/query.js';

/**
 * `GET /my/quests/total_revenue`. The path is static, so the router matches it before the
 * parametric `/my/quests/:questId` of the quests controller whatever the registration order.
 */
@ApiTags('quests')
@ActsAsTwin()
@ApiTenant({ twin: 'required' })
@Controller('my/quests')
export class RevenueController {
  constructor(private readonly revenue: RevenueService) {}

  @Get('total_revenue')
  @ApiOperation({
    summary: 'Total revenue of the acting twin',
    description:
      'The sum of the revenue entries of the quests the `X-Twin` twin created (each embark records the quest\'s price for its creator). ' +
      'Summed as an exact decimal in the database; a JSON number on the wire (three embarks at 0.10 give exactly `0.3`). ' +
      'The body is the contract\'s bare `{"revenue": <number>}`, not a JSON:API document.',
  })
  @ApiDocument(200, TOTAL_REVENUE, { description: '`{revenue: number}`' })
  total(@Tenant() tenant: TwinTenant, @Query(NO_QUERY_PARAMETERS) _query: unknown) {
    return this.revenue.total(tenant);
  }
}
