import { Controller, Get, Inject, Param, Query, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ActsAsTwin } from '../common/auth/route-access.js';
import { Tenant } from '../common/auth/tenant.js';
import { absoluteRequestUrl } from '../common/http/request-url.js';
import { RawBody } from '../common/json-api/envelope.js';
import { ApiErrors, ApiQueryParameters, ApiTenant } from '../common/openapi/docs.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { readTile } from './tile-coordinates.js';
import { MVT_MEDIA_TYPE, TILE_DESCRIPTION, TILE_JSON_EXAMPLE, TILE_JSON_SCHEMA, TILE_PATH_PARAMETERS } from './tile.openapi.js';
import { TILE_QUERY, type TileQuery } from './tile-query.js';
import { TilesService } from './tiles.service.js';

/**
 * Map clients fetch tiles through the browser's HTTP cache: the same URL shows other twins to another
 * organization, and a twin's change must show at once, so a cached tile is the caller's own and is
 * revalidated on every use (a 304 when unchanged).
 */
function privateToTheCaller(reply: FastifyReply): void {
  reply.header('cache-control', 'private, no-cache').header('vary', 'Authorization, X-Organization, X-Twin');
}

const CACHING_HEADERS = {
  'Cache-Control': { description: '`private, no-cache`: a cache keeps it for this caller only, and revalidates it (ETag) on every use.', schema: { type: 'string' } },
  Vary: { description: '`Authorization, X-Organization, X-Twin, Accept-Encoding`', schema: { type: 'string' } },
};

const X_TWIN = { name: 'X-Twin', required: false, description: 'The acting twin; needed by `is_connection`.' };

@ApiTags('maps')
@Controller()
export class TilesController {
  constructor(
    private readonly tiles: TilesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('twins/tiles/:z/:x/:y.mvt')
  @ActsAsTwin('optional')
  @ApiOperation({ summary: 'A vector tile of the twins the caller can see', description: TILE_DESCRIPTION })
  @ApiTenant({ twin: 'optional' })
  @ApiHeader(X_TWIN)
  @ApiParam(TILE_PATH_PARAMETERS[0])
  @ApiParam(TILE_PATH_PARAMETERS[1])
  @ApiParam(TILE_PATH_PARAMETERS[2])
  @ApiQueryParameters(TILE_QUERY)
  @ApiResponse({
    status: 200,
    description: 'The tile (gzip or br with `Accept-Encoding`).',
    headers: CACHING_HEADERS,
    content: { [MVT_MEDIA_TYPE]: { schema: { type: 'string', format: 'binary' } } },
  })
  @ApiResponse({ status: 204, description: 'No twin the caller sees, and the filters keep, is in the tile.' })
  @ApiErrors({ 400: '`invalid_parameter`: `z`, `x` or `y` is not an integer of the pyramid (`source.parameter` names it), or a filter is invalid.' })
  async tile(
    @Tenant() tenant: Tenant,
    @Param() path: { z: string; x: string; y: string },
    @Query(TILE_QUERY) query: TileQuery,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const bytes = await this.tiles.tile(tenant, readTile(path), query);
    privateToTheCaller(reply);
    if (!bytes) {
      reply.status(204);
      return undefined;
    }
    reply.header('content-type', MVT_MEDIA_TYPE);
    return new RawBody(bytes);
  }

  @Get('twins/tiles.json')
  @ActsAsTwin('optional')
  @ApiOperation({
    summary: 'TileJSON of the vector tiles, with the filters given',
    description: 'TileJSON 3.0.0: the tile URL template keeps the request\'s filter parameters; `bounds` and `center` show the twins those tiles hold.',
  })
  @ApiTenant({ twin: 'optional' })
  @ApiHeader(X_TWIN)
  @ApiQueryParameters(TILE_QUERY)
  @ApiResponse({ status: 200, description: 'TileJSON 3.0.0', headers: CACHING_HEADERS, content: { 'application/json': { schema: TILE_JSON_SCHEMA, example: TILE_JSON_EXAMPLE } } })
  @ApiErrors(400)
  async tileJson(
    @Tenant() tenant: Tenant,
    @Query(TILE_QUERY) query: TileQuery,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const document = await this.tiles.tileJson(tenant, query, absoluteRequestUrl(request, this.config.publicUrl));
    privateToTheCaller(reply);
    reply.header('content-type', 'application/json');
    return new RawBody(JSON.stringify(document));
  }
}
