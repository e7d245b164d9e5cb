import { Controller, Get, Headers, Param, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../common/auth/route-access.js';
import { MAP_PAGE_POLICY } from '../common/http/content-security-policy.js';
import { ifNoneMatchHits } from '../common/http/conditional.js';
import { notFound } from '../common/json-api/api-error.js';
import { RawBody } from '../common/json-api/envelope.js';
import { ApiErrors } from '../common/openapi/docs.js';
import { MAP_ASSET_MEDIA_TYPES, MAP_ASSET_NAMES, mapAsset, mapPage, type MapAsset } from './map-assets.js';

/** A versioned URL names one content: kept a year without asking again. */
const FOR_GOOD = 'public, max-age=31536000, immutable';
/** The page, and files asked for under another version: revalidated (ETag) on every use. */
const REVALIDATE = 'no-cache';

/** The page's policy, on the page and every file of it (the worker runs under its file's). */
const POLICY_HEADER = {
  'Content-Security-Policy': {
    description: `\`${MAP_PAGE_POLICY}\`: scripts, workers and requests of this origin only, no inline script, no eval, no framing.`,
    schema: { type: 'string' },
  },
};
const CACHING_HEADERS = {
  ETag: { description: 'A strong tag: a hash of the bytes.', schema: { type: 'string' } },
  'Cache-Control': { description: `\`${FOR_GOOD}\` when \`v\` names the current file, else \`${REVALIDATE}\`.`, schema: { type: 'string' } },
};
const NOT_MODIFIED = { status: 304, description: 'Not modified: `If-None-Match` names the current `ETag` (no body).', headers: { ETag: CACHING_HEADERS.ETag } };

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
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'An ETag from an earlier answer: a match is a 304.' })
  @ApiResponse({
    status: 200,
    description: `The page (\`Cache-Control: ${REVALIDATE}\`); the files it names carry their version.`,
    headers: { ETag: CACHING_HEADERS.ETag, ...POLICY_HEADER },
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  @ApiResponse(NOT_MODIFIED)
  page(@Headers('if-none-match') ifNoneMatch: string | undefined, @Res({ passthrough: true }) reply: FastifyReply) {
    return send(mapPage(), REVALIDATE, ifNoneMatch, reply);
  }

  @Get('assets/:asset')
  @ApiOperation({
    summary: "A file of the map page: its script and style, MapLibre GL JS's, the country outlines",
    description: 'Public, the same for everyone. The page names each file with `?v=<version>`; that URL is cacheable for good, any other revalidated.',
  })
  @ApiParam({ name: 'asset', schema: { type: 'string', enum: MAP_ASSET_NAMES } })
  @ApiQuery({ name: 'v', required: false, schema: { type: 'string' }, description: 'The version the page names the file by; the current one makes the answer cacheable for good.' })
  @ApiResponse({
    status: 200,
    description: 'The file.',
    headers: { ...CACHING_HEADERS, ...POLICY_HEADER },
    content: Object.fromEntries(
      MAP_ASSET_MEDIA_TYPES.map((type) => [
        type,
        { schema: type === 'application/geo+json' ? { type: 'object', description: 'A GeoJSON FeatureCollection of the countries.' } : { type: 'string' } },
      ]),
    ),
  })
  @ApiResponse(NOT_MODIFIED)
  @ApiErrors({ 404: '`not_found`: no such file.' })
  asset(
    @Param('asset') name: string,
    @Query('v') version: string | undefined,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const asset = mapAsset(name);
    if (!asset) throw notFound('The map page has no such file.');
    // Only a URL naming these very bytes may be kept without asking: another `v` (an older page, or
    // MapLibre's own worker URL) gets the current file, revalidated.
    return send(asset, version === asset.version ? FOR_GOOD : REVALIDATE, ifNoneMatch, reply);
  }
}

/** The file, or a 304 when the client's copy is current. */
function send(asset: MapAsset, cacheControl: string, ifNoneMatch: string | undefined, reply: FastifyReply): RawBody<Buffer> | undefined {
  reply.header('etag', asset.etag).header('cache-control', cacheControl);
  if (ifNoneMatchHits(ifNoneMatch, asset.etag)) {
    reply.status(304);
    return undefined;
  }
  reply.header('content-type', asset.contentType);
  return new RawBody(asset.body);
}
