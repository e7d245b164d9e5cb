/** The OpenAPI description of `GET /health`: a bare JSON object, not a JSON:API document. */
import type { SchemaObject } from '@nestjs/swagger';
import { component, ERROR_DOCUMENT } from '../common/openapi/schemas.js';

/** Whether the database answers, and which one it is: part of both health documents. */
const DATABASE_STATUS: SchemaObject = {
  type: 'object',
  required: ['status', 'kind'],
  properties: {
    status: { type: 'string', enum: ['up', 'down'] },
    kind: { type: 'string', enum: ['postgres', 'embedded'], description: '`embedded`: the embedded PGlite database (no DATABASE_URL).' },
  },
  additionalProperties: false,
};

const HEALTH_STATUS = component('HealthStatus', {
  type: 'object',
  description: 'A bare JSON object (labelled `application/vnd.api+json` like every answer), not a JSON:API document.',
  required: ['status', 'database'],
  properties: {
    status: { type: 'string', enum: ['ok', 'unavailable'] },
    database: DATABASE_STATUS,
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

const LIVENESS = component('Liveness', {
  type: 'object',
  description: 'A bare JSON object: the process answers HTTP. Nothing else is checked (no database), so an orchestrator restarts only a process that is stuck.',
  required: ['status'],
  properties: { status: { type: 'string', enum: ['ok'] } },
  additionalProperties: false,
});

export const LIVE = { schema: LIVENESS, example: { status: 'ok' } };

const READINESS = component('Readiness', {
  type: 'object',
  description:
    'A bare JSON object (labelled `application/vnd.api+json` like every answer), not a JSON:API document. `ok` when the database answers and every migration of this build is applied.',
  required: ['status', 'database', 'migrations'],
  properties: {
    status: { type: 'string', enum: ['ok', 'unavailable'] },
    database: DATABASE_STATUS,
    migrations: {
      type: 'object',
      required: ['status'],
      properties: {
        status: {
          type: 'string',
          enum: ['applied', 'pending', 'unknown'],
          description: '`pending`: the schema lacks a migration this build knows (`schema_migrations`); `unknown`: the database does not answer.',
        },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
});

export const READY = {
  schema: READINESS,
  example: { status: 'ok', database: { status: 'up', kind: 'postgres' }, migrations: { status: 'applied' } },
};

export const NOT_READY = {
  schema: { oneOf: [READINESS, ERROR_DOCUMENT] },
  examples: {
    databaseDown: {
      summary: 'The database is unreachable',
      value: { status: 'unavailable', database: { status: 'down', kind: 'postgres' }, migrations: { status: 'unknown' } },
    },
    migrationsPending: {
      summary: 'A migration of this build is not applied yet',
      value: { status: 'unavailable', database: { status: 'up', kind: 'postgres' }, migrations: { status: 'pending' } },
    },
    shuttingDown: HEALTH_DOWN.examples.shuttingDown,
  },
};
