import { Controller, Get, Inject, Param, Query, Req, Res } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import { ActsAsTwin } from '../common/auth/route-access.js';
import { Tenant } from '../common/auth/tenant.js';
import { absoluteUrl } from '../common/http/request-url.js';
import { RawBody } from '../common/json-api/envelope.js';
import { UuidParam } from '../common/json-api/uuid-param.pipe.js';
import { ApiErrors, ApiQueryParameters, ApiTenant } from '../common/openapi/docs.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ITEMS_QUERY, OGC_QUERY, type ItemsQuery } from './ogc-query.js';
import { API_DEFINITION, COLLECTIONS, CONFORMANCE, FEATURE_COLLECTION, ITEMS_DESCRIPTION, LANDING_PAGE, ONE_COLLECTION, ONE_FEATURE, QUERYABLES, ogcApiDefinition } from './ogc.openapi.js';
import { GEO_JSON, JSON_MEDIA, OPENAPI_JSON, SCHEMA_JSON } from './ogc.resource.js';
import { OgcService } from './ogc.service.js';

const FILTER_400 =
  '`invalid_parameter` (`source.parameter`): a malformed `bbox`, `datetime`, `limit`, `properties` or cursor, an unknown parameter, or a `filter` that does not parse (its position), names an unknown queryable, or compares values of different types (`source.parameter` is `filter`); `invalid_header`: a tenant header.';

/**
 * The twins as an OGC API – Features service, for GIS clients (QGIS, GDAL, OpenLayers): the same
 * token, `X-Organization` and visibility rule as `GET /twins/`. The documents are plain JSON (features:
 * GeoJSON) at the top level of the body, not JSON:API: that is what those clients read.
 */
@ApiTags('ogc')
@Controller('ogc')
export class OgcController {
  /** This service's OpenAPI document, as served at /docs-json (read once). */
  private document: Promise<OpenAPIObject> | undefined;

  constructor(
    private readonly ogc: OgcService,
    private readonly adapter: HttpAdapterHost,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The absolute URL of the landing page, the base of every link. */
  private base(request: FastifyRequest): string {
    return absoluteUrl(request, '/ogc', this.config.publicUrl);
  }

  private json(reply: FastifyReply, type: string, document: unknown): RawBody<string> {
    reply.header('content-type', type);
    return new RawBody(typeof document === 'string' ? document : JSON.stringify(document));
  }

  @Get()
  @ApiOperation({ summary: 'OGC API – Features: the landing page', description: 'Links to the API definition, the conformance classes and the collections (`rel`: `service-desc`, `conformance`, `data`).' })
  @ApiTenant()
  @ApiQueryParameters(OGC_QUERY)
  @ApiResponse({ status: 200, description: 'The landing page.', content: { [JSON_MEDIA]: LANDING_PAGE } })
  landing(@Query(OGC_QUERY) _query: unknown, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    return this.json(reply, JSON_MEDIA, this.ogc.landing(this.base(request), absoluteUrl(request, '/docs', this.config.publicUrl)));
  }

  @Get('api')
  @ApiOperation({
    summary: 'OGC API – Features: the API definition (OpenAPI 3.0)',
    description: 'This service\'s OpenAPI document restricted to the `/ogc` routes, with their paths relative to the landing page (its `servers` entry).',
  })
  @ApiTenant()
  @ApiQueryParameters(OGC_QUERY)
  @ApiResponse({ status: 200, description: 'An OpenAPI 3.0 document.', content: { [OPENAPI_JSON]: API_DEFINITION } })
  async api(@Query(OGC_QUERY) _query: unknown, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    this.document ??= this.adapter.httpAdapter
      .getInstance<FastifyInstance>()
      .inject({ method: 'GET', url: '/docs-json' })
      .then((answer) => answer.json<OpenAPIObject>())
      .catch((error: unknown) => {
        this.document = undefined;
        throw error;
      });
    return this.json(reply, OPENAPI_JSON, ogcApiDefinition(await this.document, this.base(request)));
  }

  @Get('conformance')
  @ApiOperation({
    summary: 'OGC API – Features: the conformance classes implemented',
    description: 'Part 1 (Core, GeoJSON, OpenAPI 3.0), Part 3 (Filter, Features Filter, Queryables, Queryables as Query Parameters) and the CQL2 classes the filters implement; no others.',
  })
  @ApiTenant()
  @ApiQueryParameters(OGC_QUERY)
  @ApiResponse({ status: 200, description: 'The conformance classes.', content: { [JSON_MEDIA]: CONFORMANCE } })
  conformance(@Query(OGC_QUERY) _query: unknown, @Res({ passthrough: true }) reply: FastifyReply) {
    return this.json(reply, JSON_MEDIA, this.ogc.conformance());
  }

  @Get('collections')
  @ApiOperation({ summary: 'OGC API – Features: the collections (one: `twins`)', description: 'The `twins` collection, with the extent of the twins the caller sees.' })
  @ApiTenant()
  @ApiQueryParameters(OGC_QUERY)
  @ApiResponse({ status: 200, description: 'The collections.', content: { [JSON_MEDIA]: COLLECTIONS } })
  async collections(@Tenant() tenant: Tenant, @Query(OGC_QUERY) _query: unknown, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    return this.json(reply, JSON_MEDIA, await this.ogc.collections(tenant, this.base(request)));
  }

  @Get('collections/twins')
  @ApiOperation({ summary: 'OGC API – Features: the `twins` collection', description: 'Its extent is that of the twins with a location the caller sees.' })
  @ApiTenant()
  @ApiQueryParameters(OGC_QUERY)
  @ApiResponse({ status: 200, description: 'The collection.', content: { [JSON_MEDIA]: ONE_COLLECTION } })
  async collection(@Tenant() tenant: Tenant, @Query(OGC_QUERY) _query: unknown, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    return this.json(reply, JSON_MEDIA, await this.ogc.collection(tenant, this.base(request)));
  }

  @Get('collections/twins/queryables')
  @ApiOperation({
    summary: 'OGC API – Features: what a filter of the twins may name (JSON Schema)',
    description: 'The scalar attributes of the list form, `organization` and `geometry`, with their types. Each but `geometry` is also a query parameter of the items (an equality).',
  })
  @ApiTenant()
  @ApiQueryParameters(OGC_QUERY)
  @ApiResponse({
    status: 200,
    description: 'The queryables, as `application/schema+json` (Part 3); as `application/json` to a client whose `Accept` names JSON but not JSON Schema (GDAL 3.6 asks so).',
    content: { [SCHEMA_JSON]: QUERYABLES, [JSON_MEDIA]: QUERYABLES },
  })
  queryables(@Query(OGC_QUERY) _query: unknown, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const accept = request.headers.accept ?? '';
    const type = accept.includes(JSON_MEDIA) && !accept.includes(SCHEMA_JSON) ? JSON_MEDIA : SCHEMA_JSON;
    reply.header('vary', 'Accept');
    return this.json(reply, type, this.ogc.queryables(this.base(request)));
  }

  @Get('collections/twins/items')
  @ActsAsTwin('optional')
  @ApiOperation({ summary: 'OGC API – Features: a page of the twins as GeoJSON features, filtered (CQL2)', description: ITEMS_DESCRIPTION })
  @ApiTenant({ twin: 'optional' })
  @ApiHeader({ name: 'X-Twin', required: false, description: 'The acting twin; needed by `is_connection`.' })
  @ApiQueryParameters(ITEMS_QUERY)
  @ApiResponse({ status: 200, description: 'A FeatureCollection.', content: { [GEO_JSON]: FEATURE_COLLECTION } })
  @ApiErrors({ 400: FILTER_400 })
  async items(@Tenant() tenant: Tenant, @Query(ITEMS_QUERY) query: ItemsQuery, @Res({ passthrough: true }) reply: FastifyReply) {
    const page = await this.ogc.items(tenant, query);
    reply.header('content-type', GEO_JSON);
    return page;
  }

  @Get('collections/twins/items/:id')
  @ApiOperation({ summary: 'OGC API – Features: one twin as a GeoJSON feature', description: 'A twin the caller cannot see, or one without a location, is a 404.' })
  @ApiTenant()
  @ApiQueryParameters(OGC_QUERY)
  @ApiResponse({ status: 200, description: 'The feature.', content: { [GEO_JSON]: ONE_FEATURE } })
  @ApiErrors(404)
  async item(@Tenant() tenant: Tenant, @Param('id', UuidParam) id: string, @Query(OGC_QUERY) _query: unknown, @Res({ passthrough: true }) reply: FastifyReply) {
    return this.json(reply, GEO_JSON, await this.ogc.item(tenant, id));
  }
}
