import { Inject, Injectable } from '@nestjs/common';
import type { Tenant } from '../common/auth/tenant.js';
import { invalidDocument, notFound } from '../common/json-api/api-error.js';
import type { JsonText } from '../common/json-api/resource.js';
import { loadPage, type Page, pageOfJson, pageRequest } from '../common/json-api/pagination.js';
import type { ResourceDocument } from '../common/json-api/resource-body.js';
import type { ResourceObject } from '../common/json-api/resource.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { CreateGeofenceAttributes, UpdateGeofenceAttributes } from './dto/geofence.dto.js';
import { readGeofenceGeometry } from './geofence-geometry.js';
import type { GeofenceListQuery } from './geofence-query.js';
import { geofenceResource } from './geofence.resource.js';
import { GeofencesRepository, type GeofenceChanges } from './geofences.repository.js';

const GEOMETRY_POINTER = '/data/attributes/geometry';
const NOT_FOUND = 'No geofence of your organization has this id.';

/**
 * Geofences of an organization (docs/API.md, "Geofences"): another organization's are 404s. Writing one
 * records no crossing: crossings are made by positions (geofence-crossings.ts), against the geofences as
 * they are when the position is stored.
 */
@Injectable()
export class GeofencesService {
  constructor(
    private readonly geofences: GeofencesRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(tenant: Tenant, document: ResourceDocument<CreateGeofenceAttributes>): Promise<ResourceObject> {
    const { name, description } = document.attributes;
    const geometry = await this.geometry(document.attributes.geometry);
    return geofenceResource(await this.geofences.create(tenant.organization.id, { name, description: description ?? null, geometry }));
  }

  async list(tenant: Tenant, query: GeofenceListQuery): Promise<Page<ResourceObject[]>> {
    const page = pageRequest(query.page, { defaultSize: this.config.pageSizeDefault, maxSize: this.config.pageSizeMax });
    return loadPage(
      page,
      () => this.geofences.count(tenant.organization.id),
      () => this.geofences.page(tenant.organization.id, page),
      geofenceResource,
    );
  }

  async get(tenant: Tenant, id: string): Promise<ResourceObject> {
    const row = await this.geofences.find(tenant.organization.id, id);
    if (!row) throw notFound(NOT_FOUND);
    return geofenceResource(row);
  }

  async update(tenant: Tenant, id: string, document: ResourceDocument<UpdateGeofenceAttributes>): Promise<ResourceObject> {
    const { name, description } = document.attributes;
    const changes: GeofenceChanges = { name, description };
    // The tenancy check first: another organization's geofence is a 404 whatever the document says.
    if (!(await this.geofences.find(tenant.organization.id, id))) throw notFound(NOT_FOUND);
    if (document.present.has('geometry')) changes.geometry = await this.geometry(document.attributes.geometry);
    const row = await this.geofences.update(tenant.organization.id, id, changes);
    if (!row) throw notFound(NOT_FOUND);
    return geofenceResource(row);
  }

  async remove(tenant: Tenant, id: string): Promise<void> {
    if (!(await this.geofences.delete(tenant.organization.id, id))) throw notFound(NOT_FOUND);
  }

  /** `GET /geofences/<ID>/twins/`: the organization's twins inside it now, in the twins' list form. */
  async twins(tenant: Tenant, id: string, query: GeofenceListQuery): Promise<Page<JsonText>> {
    const page = pageRequest(query.page, { defaultSize: this.config.pageSizeDefault, maxSize: this.config.pageSizeMax });
    const counted = await this.geofences.twinsInside(tenant.organization.id, id, page);
    if (!counted.found) throw notFound(NOT_FOUND);
    return pageOfJson(page, counted);
  }

  /** The GeoJSON text of a valid geometry: its form read here, its validity PostGIS's to say. */
  private async geometry(value: unknown): Promise<string> {
    const { geojson } = readGeofenceGeometry(value, GEOMETRY_POINTER);
    const reason = await this.geofences.invalidReason(geojson);
    if (reason !== null) throw invalidDocument(`geometry is not valid: ${reason} (PostGIS ST_IsValidReason).`, GEOMETRY_POINTER);
    return geojson;
  }
}
