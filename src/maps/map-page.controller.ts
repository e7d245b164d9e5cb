import { Controller, Get, Headers, Param, Res } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../common/auth/route-access.js';
import { ifNoneMatchHits } from '../common/http/conditional.js';
import { notFound } from '../common/json-api/api-error.js';
import { RawBody } from '../common/json-api/envelope.js';
import { ApiErrors } from '../common/openapi/docs.js';
import { MAP_ASSET_NAMES, mapAsset, type MapAsset } from './map-assets.js';

/**
 * The map page for people (`GET /map`) and its files. Public: it holds no data; the page asks for the
 * token and organization and keeps them in the browser's session storage, and every tile it loads
 * goes through the API with them.
 */
@ApiTags('maps')
@Controller('map')
@Public()
export class MapPageController {
  @Get()
  @ApiOperation({
    summary: 'The map page (HTML): sign in with a token and organization, see the twins on a map',
    description: 'MapLibre GL JS over the vector tiles of `GET /twins/tiles/{z}/{x}/{y}.mvt`, with the list filters as controls. Everything it loads comes from this service (docs/MAPS.md).',
  })
  @ApiResponse({ status: 200, description: 'The page.', content: { 'text/html': { schema: { type: 'string' } } } })
  page(@Headers('if-none-match') ifNoneMatch: string | undefined, @Res({ passthrough: true }) reply: FastifyReply) {
    return send(mapAsset('index.html')!, ifNoneMatch, reply);
  }

  @Get('assets/:asset')
  @ApiOperation({ summary: "A file of the map page: its script and style, MapLibre GL JS's, the country outlines" })
  @ApiParam({ name: 'asset', schema: { type: 'string', enum: MAP_ASSET_NAMES } })
  @ApiResponse({
    status: 200,
    description: 'The file.',
    content: Object.fromEntries(
      [...new Set(MAP_ASSET_NAMES.map((name) => mapAsset(name)!.contentType.split(';')[0]))].map((type) => [
        type,
        { schema: type === 'application/geo+json' ? { type: 'object', description: 'A GeoJSON FeatureCollection of the countries.' } : { type: 'string' } },
      ]),
    ),
  })
  @ApiErrors({ 404: '`not_found`: no such file.' })
  asset(@Param('asset') name: string, @Headers('if-none-match') ifNoneMatch: string | undefined, @Res({ passthrough: true }) reply: FastifyReply) {
    const asset = mapAsset(name);
    if (!asset) throw notFound('The map page has no such file.');
    return send(asset, ifNoneMatch, reply);
  }
}

/** The file, or a 304 when the client's copy is current; revalidated on every use (the URLs are not versioned). */
function send(asset: MapAsset, ifNoneMatch: string | undefined, reply: FastifyReply): RawBody<Buffer> | undefined {
  reply.header('etag', asset.etag).header('cache-control', 'no-cache');
  if (ifNoneMatchHits(ifNoneMatch, asset.etag)) {
    reply.status(304);
    return undefined;
  }
  reply.header('content-type', asset.contentType);
  return new RawBody(asset.body);
}
