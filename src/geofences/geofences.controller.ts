import { Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiExtraModels, ApiNoContentResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Tenant, type Tenant as TenantContext } from '../common/auth/tenant.js';
import { assertIdMatchesPath, ResourceBody, type ResourceDocument } from '../common/json-api/resource-body.js';
import { UuidParam } from '../common/json-api/uuid-param.pipe.js';
import { ApiDocument, ApiErrors, ApiQueryParameters, ApiRequestDocument, ApiTenant } from '../common/openapi/docs.js';
import { EXAMPLE_IDS } from '../common/openapi/example-ids.js';
import { TWIN_LIST } from '../twins/twin.openapi.js';
import { CreateGeofenceAttributes, UpdateGeofenceAttributes } from './dto/geofence.dto.js';
import { GEOFENCE_CREATE_REQUEST, GEOFENCE_DOCUMENT, GEOFENCE_PAGE, GEOFENCE_UPDATE_REQUEST } from './geofence.openapi.js';
import { GEOFENCE_LIST_QUERY, type GeofenceListQuery } from './geofence-query.js';
import { GeofencesService } from './geofences.service.js';

const WHO =
  'Any member of the `X-Organization` organization manages its geofences; another organization\'s geofence answers 404, as if it did not exist. ' +
  'A position of a twin of the organization that enters or leaves one is an event of the twin\'s timeline (`geofence.entered`, `geofence.exited`; docs/API.md, "Geofences").';
const NOT_FOUND = "`not_found`: no geofence of the `X-Organization` organization has this id (other organizations' included), or a page past the last one.";
const GEOMETRY_ERRORS =
  '`invalid_document` (`source.pointer`): an unknown or invalid attribute; a geometry that is not a GeoJSON Polygon or MultiPolygon, with coordinates out of range, ' +
  'a ring not closed or of fewer than 4 positions, more than 10,000 vertices, or invalid for PostGIS (`/data/attributes/geometry`, the detail giving `ST_IsValidReason`, e.g. a self-intersection). ' +
  '`invalid_header`: a tenant header.';

@ApiTags('geofences')
@ApiExtraModels(CreateGeofenceAttributes, UpdateGeofenceAttributes)
@ApiTenant()
@Controller('geofences')
export class GeofencesController {
  constructor(private readonly geofences: GeofencesService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Create a geofence', description: `${WHO} Creating one records no crossing: twins already inside enter it with their next position there.` })
  @ApiRequestDocument(GEOFENCE_CREATE_REQUEST.schema, { description: 'A geofences document.', examples: GEOFENCE_CREATE_REQUEST.examples })
  @ApiDocument(201, GEOFENCE_DOCUMENT, { description: '`{data: geofence}`' })
  @ApiErrors({ 400: GEOMETRY_ERRORS, 403: '`client_generated_id`: the document has a `data.id`; `forbidden`: a tenant header (`source.header`).', 409: '`type_mismatch`: `data.type` is not `geofences`.' })
  create(@Tenant() tenant: TenantContext, @ResourceBody({ type: 'geofences', attributes: CreateGeofenceAttributes }) document: ResourceDocument<CreateGeofenceAttributes>) {
    return this.geofences.create(tenant, document);
  }

  @Get()
  @ApiOperation({ summary: "The organization's geofences", description: `${WHO} Oldest first, paginated with \`page_number\`/\`page_size\`.` })
  @ApiQueryParameters(GEOFENCE_LIST_QUERY)
  @ApiDocument(200, GEOFENCE_PAGE, { description: '`{links, data: [geofence], meta: {pagination}}`' })
  @ApiErrors({ 404: '`not_found`: a page past the last one.' })
  list(@Tenant() tenant: TenantContext, @Query(GEOFENCE_LIST_QUERY) query: GeofenceListQuery) {
    return this.geofences.list(tenant, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One geofence', description: WHO })
  @ApiParam({ name: 'id', example: EXAMPLE_IDS.geofences })
  @ApiDocument(200, GEOFENCE_DOCUMENT, { description: '`{data: geofence}`' })
  @ApiErrors({ 404: NOT_FOUND })
  get(@Tenant() tenant: TenantContext, @Param('id', UuidParam) id: string) {
    return this.geofences.get(tenant, id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Change a geofence', description: `${WHO} \`name\`, \`description\` and \`geometry\` change when given; a change records no crossing.` })
  @ApiParam({ name: 'id', example: EXAMPLE_IDS.geofences })
  @ApiRequestDocument(GEOFENCE_UPDATE_REQUEST.schema, { description: 'A geofences document with the changes.', examples: GEOFENCE_UPDATE_REQUEST.examples })
  @ApiDocument(200, GEOFENCE_DOCUMENT, { description: '`{data: geofence}` after the change' })
  @ApiErrors({ 400: GEOMETRY_ERRORS, 404: NOT_FOUND, 409: '`type_mismatch` (`data.type` is not `geofences`) or `id_mismatch` (`data.id` is not the path id).' })
  update(
    @Tenant() tenant: TenantContext,
    @Param('id', UuidParam) id: string,
    @ResourceBody({ type: 'geofences', attributes: UpdateGeofenceAttributes, id: 'required' }) document: ResourceDocument<UpdateGeofenceAttributes>,
  ) {
    assertIdMatchesPath(document.id, id);
    return this.geofences.update(tenant, id, document);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a geofence', description: `${WHO} The crossings recorded on timelines stay (their events name it).` })
  @ApiParam({ name: 'id', example: EXAMPLE_IDS.geofences })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors({ 404: NOT_FOUND })
  async delete(@Tenant() tenant: TenantContext, @Param('id', UuidParam) id: string): Promise<void> {
    await this.geofences.remove(tenant, id);
  }

  @Get(':id/twins')
  @ApiOperation({
    summary: "The organization's twins inside a geofence",
    description: `${WHO} The twins whose current location the geofence's current geometry covers (the boundary is inside, a hole outside), in the list form of \`GET /twins/\`, by name; paginated with \`page_number\`/\`page_size\`.`,
  })
  @ApiParam({ name: 'id', example: EXAMPLE_IDS.geofences })
  @ApiQueryParameters(GEOFENCE_LIST_QUERY)
  @ApiDocument(200, TWIN_LIST, { description: '`{links, data: [twin], meta: {pagination}}`' })
  @ApiErrors({ 404: NOT_FOUND })
  twins(@Tenant() tenant: TenantContext, @Param('id', UuidParam) id: string, @Query(GEOFENCE_LIST_QUERY) query: GeofenceListQuery) {
    return this.geofences.twins(tenant, id, query);
  }
}
