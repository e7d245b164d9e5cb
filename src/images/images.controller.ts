import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Tenant } from '../common/auth/tenant.js';
import { RawBody } from '../common/json-api/envelope.js';
import { UuidParam } from '../common/json-api/uuid-param.pipe.js';
import { declareQuery, type QueryOf } from '../common/json-api/query.js';
import { ApiDocument, ApiErrors, ApiQueryParameters, ApiTenant } from '../common/openapi/docs.js';
import { ifNoneMatchHits } from '../common/http/conditional.js';
import { IMAGE_CONTENT_TYPES } from './image-format.js';
import { ImageLinks } from './image-links.js';
import { IMAGE_DOCUMENT } from './image.openapi.js';
import { IMAGE_FIELDS } from './image.resource.js';
import { ImagesService } from './images.service.js';

/** `GET /images/<IMG_ID>`: sparse fieldsets only. */
const IMAGE_QUERY = declareQuery({}, { fields: { images: IMAGE_FIELDS } });
type ImageQuery = QueryOf<typeof IMAGE_QUERY.parameters>;

/** The image bytes, under each image media type. */
const IMAGE_BYTES = Object.fromEntries(IMAGE_CONTENT_TYPES.map((type) => [type, { schema: { type: 'string', format: 'binary' } }]));

const NOT_FOUND = '`not_found`: no image readable by the caller has this id.';

const VISIBILITY =
  'Readable within the uploading organization; an image used as the summary image of a public quest is readable by any authenticated caller of any organization (it is on everyone\'s discovery feed), and one used by a quest of the caller\'s organization (e.g. a copy made by embarking) by that organization. Anything else answers 404.';

/** Image upload and reading. Token + `X-Organization`; `X-Twin` is not needed. */
@ApiTags('images')
@ApiTenant()
@Controller('images')
export class ImagesController {
  constructor(
    private readonly images: ImagesService,
    private readonly links: ImageLinks,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Upload an image',
    description:
      'The body is the raw image with `Content-Type: image/png`, `image/jpeg`, `image/webp` or `image/gif` (at most 5 MiB, else 413). ' +
      'The bytes must really be that format: their magic bytes are checked against the declared type and the width and height are read ' +
      'from the header (PNG IHDR, GIF logical screen, JPEG SOFn, WebP VP8/VP8L/VP8X). Another media type is a 415; bytes that are not an ' +
      'image of the declared type, or a truncated header, are a 400 (`invalid_image`). Use the returned `id` as a quest\'s `summary-image`.',
  })
  @ApiConsumes(...IMAGE_CONTENT_TYPES)
  @ApiBody({ description: 'The image bytes.', schema: { type: 'string', format: 'binary' } })
  @ApiDocument(201, IMAGE_DOCUMENT, { description: '`{data: image}`' })
  @ApiErrors({
    400: '`invalid_image`: the bytes are not an image of the declared type, or its header is truncated; `invalid_header`: a tenant header.',
    413: '`payload_too_large`: the image is over IMAGE_LIMIT_BYTES (5 MiB).',
    415: '`unsupported_media_type`: a `Content-Type` other than `image/png`, `image/jpeg`, `image/webp` or `image/gif`.',
  })
  upload(@Tenant() tenant: Tenant, @Headers('content-type') contentType: string | undefined, @Body() body: unknown, @Req() request: FastifyRequest) {
    return this.images.upload(tenant, contentType, body, this.links.forRequest(request));
  }

  @Get(':imageId')
  @ApiOperation({ summary: 'One image\'s metadata', description: VISIBILITY })
  @ApiQueryParameters(IMAGE_QUERY)
  @ApiDocument(200, IMAGE_DOCUMENT, { description: '`{data: image}`' })
  @ApiErrors({ 404: NOT_FOUND })
  get(@Tenant() tenant: Tenant, @Param('imageId', UuidParam) imageId: string, @Query(IMAGE_QUERY) query: ImageQuery, @Req() request: FastifyRequest) {
    return this.images.get(tenant, imageId, this.links.forRequest(request), query.fields);
  }

  @Get(':imageId/content')
  @ApiOperation({
    summary: 'An image\'s bytes',
    description: `The bytes with the image's own \`Content-Type\`, a strong \`ETag\` (the SHA-256 of the bytes) and \`Cache-Control: private, max-age=86400\` (an image never changes). \`If-None-Match\` with the current tag → 304 without a body. ${VISIBILITY}`,
  })
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'An ETag from an earlier response.' })
  @ApiResponse({
    status: 200,
    description: 'The image bytes, with the image\'s own `Content-Type`.',
    headers: {
      ETag: { description: 'Strong tag: the SHA-256 of the bytes, quoted.', schema: { type: 'string' } },
      'Cache-Control': { description: '`private, max-age=86400`', schema: { type: 'string' } },
    },
    content: IMAGE_BYTES,
  })
  @ApiResponse({ status: 304, description: 'Not modified: the client\'s copy is current (no body).' })
  @ApiErrors({ 404: NOT_FOUND })
  async content(
    @Tenant() tenant: Tenant,
    @Param('imageId', UuidParam) imageId: string,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<RawBody<Buffer> | undefined> {
    const content = await this.images.content(tenant, imageId);
    // Read before any header is set: a failed read must not answer with caching headers.
    const bytes = ifNoneMatchHits(ifNoneMatch, content.etag) ? undefined : await content.read();
    // Who may read an image depends on the credentials, so caches must key the answer by them.
    reply.header('etag', content.etag).header('cache-control', 'private, max-age=86400').header('vary', 'Authorization, X-Organization');
    if (bytes === undefined) {
      reply.status(304);
      return undefined;
    }
    reply.header('content-type', content.contentType);
    return new RawBody(bytes);
  }
}
