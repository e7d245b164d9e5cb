import type { ResourceObject } from '../common/json-api/resource.js';
import { ResourceForm, timestamp } from '../common/json-api/resource-sql.js';
import type { GeofenceRow } from './geofences.repository.js';

const GEOFENCE = new ResourceForm<GeofenceRow>({
  type: 'geofences',
  attributes: { name: 'name', description: 'description', geometry: 'geometry', created: timestamp('created'), modified: timestamp('modified') },
});

/** A geofence of the organization. */
export const geofenceResource = (row: GeofenceRow): ResourceObject => GEOFENCE.resource(row);
