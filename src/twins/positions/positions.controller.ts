import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Tenant } from '../../common/auth/tenant.js';
import { GEO_JSON_MEDIA_TYPE, JSON_API_MEDIA_TYPE } from '../../common/json-api/resource.js';
import { UuidParam } from '../../common/json-api/uuid-param.pipe.js';
import { ApiErrors, ApiQueryParameters, ApiRequestDocument, ApiTenant } from '../../common/openapi/docs.js';
import { POSITIONS_DESCRIPTION, POSITIONS_RECEIVED, POSITIONS_UPLOAD, TRACK_DESCRIPTION, TRACK_LINE, TRACK_POINTS } from './position.openapi.js';
import { PositionsService } from './positions.service.js';
import { TRACK_QUERY, type TrackQuery } from './track-query.js';

@ApiTags('positions')
@ApiTenant()
@Controller('twins/:id')
export class PositionsController {
  constructor(private readonly positions: PositionsService) {}

  @Post('positions')
  @HttpCode(200)
  @ApiOperation({ summary: "Report where a twin of the caller's organization was (1 to 1,000 positions)", description: POSITIONS_DESCRIPTION })
  @ApiRequestDocument(POSITIONS_UPLOAD.schema, { description: 'A document of positions.', examples: POSITIONS_UPLOAD.examples })
  @ApiResponse({
    status: 200,
    description: '`{meta: {received, new}}`',
    content: { [JSON_API_MEDIA_TYPE]: { schema: POSITIONS_RECEIVED.schema, example: POSITIONS_RECEIVED.example } },
  })
  @ApiErrors({
    400: '`invalid_document`: a malformed document or position (`source.pointer` `/data/<n>/…`, one error object per problem).',
    403: '`forbidden`: a tenant header (`source.header`), or a position with an `id` (positions have none).',
    404: "`not_found`: no twin of the caller's organization has this id (twins of other organizations included, even public ones).",
    409: '`type_mismatch`: a resource whose `type` is not `positions`.',
  })
  upload(@Tenant() tenant: Tenant, @Param('id', UuidParam) id: string, @Body() body: unknown) {
    return this.positions.upload(tenant, id, body);
  }

  @Get('track')
  @ApiOperation({ summary: "Where a twin of the caller's organization was: its positions over time (GeoJSON)", description: TRACK_DESCRIPTION })
  @ApiQueryParameters(TRACK_QUERY)
  @ApiResponse({
    status: 200,
    description: 'A FeatureCollection (`application/geo+json`): Point features, or one LineString feature with `format=line`.',
    content: { [GEO_JSON_MEDIA_TYPE]: { schema: { anyOf: [TRACK_POINTS.schema, TRACK_LINE.schema] }, examples: { points: { value: TRACK_POINTS.example }, line: { value: TRACK_LINE.example } } } },
  })
  @ApiErrors({
    400: '`invalid_parameter`: a malformed parameter, `until` not after `since`, `simplify` without `format=line`, a `page_after` that is not this track\'s cursor.',
    404: "`not_found`: no twin of the caller's organization has this id (public twins of other organizations included).",
  })
  async track(@Tenant() tenant: Tenant, @Param('id', UuidParam) id: string, @Query(TRACK_QUERY) query: TrackQuery, @Res({ passthrough: true }) reply: FastifyReply) {
    const collection = await this.positions.track(tenant, id, query);
    reply.header('content-type', GEO_JSON_MEDIA_TYPE);
    return collection;
  }
}
