/** The OpenAPI description of the geofence routes. */
import { getSchemaPath } from '@nestjs/swagger';
import { EXAMPLE_IDS } from '../common/openapi/example-ids.js';
import { pageDocument, requestDocument, resourceForms, singleDocument, TIMESTAMP } from '../common/openapi/schemas.js';
import { CreateGeofenceAttributes, UpdateGeofenceAttributes } from './dto/geofence.dto.js';
import { geofenceResource } from './geofence.resource.js';
import type { GeofenceRow } from './geofences.repository.js';

const GEOFENCE_ID = EXAMPLE_IDS.geofences;

const SQUARE = {
  type: 'Polygon',
  coordinates: [
    [
      [2.29, 48.85],
      [2.3, 48.85],
      [2.3, 48.86],
      [2.29, 48.86],
      [2.29, 48.85],
    ],
  ],
};

const SAMPLE_ROW: GeofenceRow = {
  id: GEOFENCE_ID,
  name: 'Depot',
  description: 'The yard and its gate',
  geometry: SQUARE,
  created: '2026-11-21T19:26:03.123456Z',
  modified: '2026-11-21T19:26:03.123456Z',
};

const sample = geofenceResource(SAMPLE_ROW);

const FORMS = resourceForms({
  type: 'geofences',
  attributes: {
    name: { type: 'string', minLength: 1, maxLength: 255 },
    description: { type: 'string', nullable: true, maxLength: 1024 },
    geometry: {
      type: 'object',
      required: ['type', 'coordinates'],
      properties: { type: { type: 'string', enum: ['Polygon', 'MultiPolygon'] }, coordinates: { type: 'array', items: { type: 'array', items: {} } } },
      additionalProperties: false,
      description: 'GeoJSON Polygon or MultiPolygon, WGS 84, as stored (PostGIS writes at most 9 decimals).',
    },
    created: TIMESTAMP,
    modified: TIMESTAMP,
  },
  forms: { GeofenceResource: { sample, description: 'A geofence of the organization.' } },
});

export const GEOFENCE_DOCUMENT = singleDocument('GeofenceDocument', FORMS.GeofenceResource, sample);
export const GEOFENCE_PAGE = pageDocument('GeofenceListDocument', FORMS.GeofenceResource, { path: '/geofences/', items: [sample] });

export const GEOFENCE_CREATE_REQUEST = {
  schema: requestDocument('GeofenceCreateDocument', {
    type: 'geofences',
    description: '`{data: {type: "geofences", attributes: {name, geometry, description?}}}`',
    attributes: { $ref: getSchemaPath(CreateGeofenceAttributes) },
    attributesRequired: true,
    id: 'forbidden',
  }),
  examples: {
    polygon: { summary: 'A square', value: { data: { type: 'geofences', attributes: { name: 'Depot', description: 'The yard and its gate', geometry: SQUARE } } } },
    hole: {
      summary: 'A polygon with a hole (the hole is outside)',
      value: {
        data: {
          type: 'geofences',
          attributes: {
            name: 'Park without its pond',
            geometry: {
              type: 'Polygon',
              coordinates: [
                [
                  [0, 0],
                  [10, 0],
                  [10, 10],
                  [0, 10],
                  [0, 0],
                ],
                [
                  [4, 4],
                  [6, 4],
                  [6, 6],
                  [4, 6],
                  [4, 4],
                ],
              ],
            },
          },
        },
      },
    },
  },
};

export const GEOFENCE_UPDATE_REQUEST = {
  schema: requestDocument('GeofenceUpdateDocument', {
    type: 'geofences',
    description: '`{data: {type: "geofences", id, attributes}}`: `id` must be the path id; the attributes given change.',
    attributes: { $ref: getSchemaPath(UpdateGeofenceAttributes) },
    id: 'required',
  }),
  examples: {
    rename: { summary: 'Rename', value: { data: { type: 'geofences', id: GEOFENCE_ID, attributes: { name: 'Depot north' } } } },
    reshape: { summary: 'Move the boundary', value: { data: { type: 'geofences', id: GEOFENCE_ID, attributes: { geometry: SQUARE } } } },
  },
};
