/** The OpenAPI description of `GET /health`: a bare JSON object, not a JSON:API document. */
import { component, ERROR_DOCUMENT } from '../common/openapi/schemas.js';

const HEALTH_STATUS = component('HealthStatus', {
  type: 'object',
  description: 'A bare JSON object (labelled `application/vnd.api+json` like every answer), not a JSON:API document.',
  required: ['status', 'database'],
  properties: {
    status: { type: 'string', enum: ['ok', 'unavailable'] },
    database: {
      type: 'object',
      required: ['status', 'kind'],
      properties: {
        status: { type: 'string', enum: ['up', 'down'] },
        kind: { type: 'string', enum: ['postgres', 'embedded'], description: '`embedded`: the embedded PGlite database (no DATABASE_URL).' },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
});

export const HEALTH_UP = { schema: HEALTH_STATUS, example: { status: 'ok', database: { status: 'up', kind: 'postgres' } } };

/** The database is down (the health body), or the service is shutting down (an errors document, as every route). */
export const HEALTH_DOWN = {
  schema: { oneOf: [HEALTH_STATUS, ERROR_DOCUMENT] },
  examples: {
    databaseDown: { summary: 'The database is unreachable', value: { status: 'unavailable', database: { status: 'down', kind: 'postgres' } } },
    shuttingDown: {
      summary: 'The service is shutting down',
      value: { errors: [{ status: '503', code: 'shutting_down', title: 'Service unavailable', detail: 'The service is shutting down; retry the request.' }] },
    },
  },
};
