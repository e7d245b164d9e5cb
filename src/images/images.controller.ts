import { Body, Controller, Get, Headers, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Tenant } from '../common/auth/tenant.js';
import { RawBody } from '../common/json-api/envelope.js';
import { UuidParam } from '../common/json-api/uuid-param.pipe.js';
import { ApiErrors, ApiTenant } from '../common/openapi/docs.js';
import { IMAGE_CONTENT_TYPES } from './image-format.js';
import { ImageLinks } from './image-links.js';
import { ImagesService } from './images.service.js';

const IMAGE_EXAMPLE = {
  data: {
    type: 'images',
    id: '0b6f0d3e-3c1b-4c69-9d55-5a0a4f1f7b21',
    attributes: {
      'content-type': 'image/png',
      size: 48213,
      width: 1200,
      height: 630,
      url: 'https://api.example.com/images/0b6f0d3e-3c1b-4c69-9d55-5a0a4f1f7b21/content',
      created: '2026-11-21T19:26:03.123456Z',
    },
  },
};

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
  @ApiCreatedResponse({ description: '`{data: image}`', schema: { example: IMAGE_EXAMPLE } })
  @ApiErrors(413, 415)
  upload(@Tenant() tenant: Tenant, @Headers('content-type') contentType: string | undefined, @Body() body: unknown, @Req() request: FastifyRequest) {
    return this.images.upload(tenant, contentType, body, this.links.forRequest(request));
  }

  @Get(':imageId')
  @ApiOperation({ summary: 'One image\'s metadata', description: VISIBILITY })
  @ApiOkResponse({ description: '`{data: image}`', schema: { example: IMAGE_EXAMPLE } })
  @ApiErrors(404)
  get(@Tenant() tenant: Tenant, @Param('imageId', UuidParam) imageId: string, @Req() request: FastifyRequest) {
    return this.images.get(tenant, imageId, this.links.forRequest(request));
  }

  @Get(':imageId/content')
  @ApiOperation({
    summary: 'An image\'s bytes',
    description: `The bytes with the image's own \`Content-Type\`, a strong \`ETag\` (the SHA-256 of the bytes) and \`Cache-Control: private, max-age=86400\` (an image never changes). \`If-None-Match\` with the current tag → 304 without a body. ${VISIBILITY}`,
  })
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'An ETag from an earlier response.' })
  @ApiProduces(...IMAGE_CONTENT_TYPES)
  @ApiOkResponse({ description: 'The image bytes.', schema: { type: 'string', format: 'binary' } })
  @ApiResponse({ status: 304, description: 'Not modified: the client\'s copy is current.' })
  @ApiErrors(404)
  async content(
    @Tenant() tenant: Tenant,
    @Param('imageId', UuidParam) imageId: string,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<RawBody<Buffer> | undefined> {
    const content = await this.images.content(tenant, imageId, ifNoneMatch);
    reply.header('etag', content.etag).header('cache-control', 'private, max-age=86400').header('vary', 'Authorization, X-Organization');
    if (content.notModified) {
      reply.status(304);
      return undefined;
    }
    reply.header('content-type', content.contentType);
    return new RawBody(content.bytes!);
  }
}
