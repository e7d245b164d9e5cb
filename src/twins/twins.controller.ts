import { Controller, Get, Headers, Inject, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExtraModels, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ActsAsTwin } from '../common/auth/route-access.js';
import { Tenant } from '../common/auth/tenant.js';
import { readIfMatch } from '../common/http/conditional.js';
import { absoluteUrl } from '../common/http/request-url.js';
import { ResourceBody, type ResourceDocument } from '../common/json-api/resource-body.js';
import { GEO_JSON_MEDIA_TYPE, JSON_API_MEDIA_TYPE } from '../common/json-api/resource.js';
import { UuidParam } from '../common/json-api/uuid-param.pipe.js';
import { ApiDocument, ApiErrors, ApiIfMatch, ApiQueryParameters, ApiRequestDocument, ApiTenant } from '../common/openapi/docs.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { CreateTwinAttributes, PersonalityAttributes, UpdateTwinAttributes } from './dto/twin-attributes.dto.js';
import { LIST_DESCRIPTION, OWN_TWIN_LIST, TWIN_CREATE_REQUEST, TWIN_DETAIL, TWIN_GEO_LISTING, TWIN_LIST, TWIN_UPDATE_REQUEST } from './twin.openapi.js';
import { OWN_TWIN_LIST_QUERY, TWIN_DETAIL_QUERY, TWIN_LIST_QUERY, type OwnTwinListQuery, type TwinDetailQuery, type TwinListQuery } from './twin-filters.js';
import { wantsGeoJson } from './twin-geo.js';
import { TwinsService } from './twins.service.js';

const LOCATION_HEADER = { Location: { description: 'The absolute URL of the twin (`GET /twins/<TWIN_ID>/`).', schema: { type: 'string', format: 'uri' } } };

@ApiTags('twins')
@ApiExtraModels(PersonalityAttributes, CreateTwinAttributes, UpdateTwinAttributes)
@Controller()
export class TwinsController {
  constructor(
    private readonly twins: TwinsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('twins')
  @ActsAsTwin('optional')
  @ApiOperation({ summary: 'List the twins the caller can see (JSON:API or GeoJSON map listing)', description: LIST_DESCRIPTION })
  @ApiTenant({ twin: 'optional' })
  @ApiHeader({ name: 'X-Twin', required: false, description: 'The acting twin; needed by `is_connection`.' })
  @ApiQueryParameters(TWIN_LIST_QUERY)
  @ApiResponse({
    status: 200,
    description: 'A page of twins (`application/vnd.api+json`, list form), or the map listing (`application/geo+json`).',
    content: {
      [JSON_API_MEDIA_TYPE]: TWIN_LIST,
      [GEO_JSON_MEDIA_TYPE]: TWIN_GEO_LISTING,
    },
  })
  @ApiErrors(404)
  list(
    @Tenant() tenant: Tenant,
    @Query(TWIN_LIST_QUERY) query: TwinListQuery,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    reply.header('vary', 'Accept, Content-Type');
    if (!wantsGeoJson(request.headers)) return this.twins.list(tenant, query);
    reply.header('content-type', GEO_JSON_MEDIA_TYPE);
    return this.twins.geoList(tenant, query);
  }

  @Get('twins/:id')
  @ApiOperation({
    summary: 'One twin the caller can see (detail form, underscored names)',
    description:
      'A twin the caller cannot see is a 404, like one that does not exist. `opening_hours` is the `weekday_text` of the stored opening hours; ' +
      '`tasks_supplied` counts quest tasks naming this twin as their place; `place_id` is "" for twins that are not imported places.',
  })
  @ApiTenant()
  @ApiQueryParameters(TWIN_DETAIL_QUERY)
  @ApiDocument(200, TWIN_DETAIL, { description: '`{data: twin}` (detail form; with `include=organization`, `included: [organization]`)' })
  @ApiErrors(404)
  get(@Tenant() tenant: Tenant, @Param('id', UuidParam) id: string, @Query(TWIN_DETAIL_QUERY) query: TwinDetailQuery) {
    return this.twins.get(tenant, id, query);
  }

  @Get('my/twins')
  @ApiOperation({
    summary: "The twins of the caller's organization (own-twins form)",
    description:
      'Attributes `created, modified, name, description, personal, connections, personality, meta-data` only. Ordered by `created`, then `id`. ' +
      'Accepts the spatial filters `in_bbox`, `point`, `dist`, `ordering=distance` of `GET /twins/`.',
  })
  @ApiTenant()
  @ApiQueryParameters(OWN_TWIN_LIST_QUERY)
  @ApiDocument(200, OWN_TWIN_LIST, { description: '`{links, data: [twin], meta: {pagination}}` (own-twins form)' })
  @ApiErrors(404)
  listOwn(@Tenant() tenant: Tenant, @Query(OWN_TWIN_LIST_QUERY) query: OwnTwinListQuery) {
    return this.twins.listOwn(tenant, query);
  }

  @Post('my/twins')
  @ApiOperation({
    summary: "Create a twin in the caller's organization",
    description:
      'Attribute names are dasherized as in the list form (`phone-number`, `meta-data`, `opening-hours`); only `name` is required. ' +
      'Answers 201 with the detail form and a `Location` header (the absolute URL of `GET /twins/<TWIN_ID>/`). The calling account becomes the owner (`is_personal`). ' +
      'The service makes the id unless the document names one: apps that create twins offline may send `data.id` (a UUID; anything else is a 400, an id already taken a 409 `id_exists`).',
  })
  @ApiTenant()
  @ApiRequestDocument(TWIN_CREATE_REQUEST.schema, { description: 'A twins document.', examples: TWIN_CREATE_REQUEST.examples })
  @ApiDocument(201, TWIN_DETAIL, { description: '`{data: twin}` (detail form)', headers: LOCATION_HEADER })
  @ApiErrors({
    400: '`invalid_document`: an unknown or invalid attribute (`source.pointer`; one error object per problem), a connection the caller cannot see, a `data.id` that is not a UUID; `invalid_header`: a tenant header.',
    403: '`forbidden`: a tenant header (`source.header`).',
    409: '`type_mismatch`: `data.type` is not `twins`; `id_exists`: a twin with the `data.id` exists (`source.pointer` `/data/id`).',
  })
  async create(
    @Tenant() tenant: Tenant,
    @ResourceBody({ type: 'twins', attributes: CreateTwinAttributes, id: 'client' }) document: ResourceDocument<CreateTwinAttributes>,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const { id, answer } = await this.twins.create(tenant, document);
    reply.header('location', absoluteUrl(request, `/twins/${id}/`, this.config.publicUrl));
    return answer;
  }

  @Patch('my/twins/:id')
  @ApiIfMatch()
  @ApiOperation({
    summary: "Modify a twin of the caller's organization",
    description:
      'Only the given attributes change (same names and rules as on create; `location: null` removes the location). ' +
      'A twin of another organization is a 404 even when it is visible. A `data.id` different from the path is a 409.',
  })
  @ApiTenant()
  @ApiRequestDocument(TWIN_UPDATE_REQUEST.schema, { description: 'A twins document with the attributes to change.', examples: TWIN_UPDATE_REQUEST.examples })
  @ApiDocument(200, TWIN_DETAIL, { description: '`{data: twin}` (detail form)' })
  @ApiErrors({
    400: '`invalid_document`: an unknown or invalid attribute (`source.pointer`); `invalid_header`: a tenant header.',
    404: '`not_found`: no twin of the caller\'s organization has this id (twins of other organizations included, even visible ones).',
    409: '`type_mismatch` (`data.type` is not `twins`) or `id_mismatch` (`data.id` is not the path id).',
  })
  update(
    @Tenant() tenant: Tenant,
    @Param('id', UuidParam) id: string,
    @ResourceBody({ type: 'twins', attributes: UpdateTwinAttributes, id: 'optional' }) document: ResourceDocument<UpdateTwinAttributes>,
    @Headers('if-match') ifMatch: string | string[] | undefined,
  ) {
    return this.twins.update(tenant, id, document, readIfMatch(ifMatch));
  }
}
