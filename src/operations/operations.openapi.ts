/** The OpenAPI description of `POST /operations`: the atomic operations document, its results, examples. */
import { getSchemaPath } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger';
import { CLIENT_CHOSEN_EXAMPLE_ID, EXAMPLE_IDS } from '../common/openapi/example-ids.js';
import { component, UUID } from '../common/openapi/schemas.js';
import { CreateEventAttributes, UpdateEventAttributes } from '../events/dto/event.dto.js';
import { EVENT_DOCUMENT, EVENT_ID, EXAMPLE_EVENT } from '../events/event.openapi.js';
import { CreateTwinAttributes, UpdateTwinAttributes } from '../twins/dto/twin-attributes.dto.js';
import { TWIN_DETAIL } from '../twins/twin.openapi.js';
import { POSITION_ATTRIBUTES } from '../twins/positions/position.openapi.js';
import { MAX_OPERATIONS } from './atomic-document.js';

const REFERENCE: SchemaObject = {
  type: 'object',
  required: ['type', 'id'],
  properties: { type: { type: 'string', enum: ['events', 'twins'] }, id: UUID },
  additionalProperties: false,
};

const OPERATION = component('AtomicOperation', {
  type: 'object',
  description:
    '`add` (events, twins): `data` as `POST /events/` or `POST /my/twins/` takes it (an `id` the client chose is welcome). `update` (events, twins): ' +
    '`data` with `id` (or `ref`) as the PATCH of the resource takes it. `remove` (events): `ref` only. `add` (positions): a position as ' +
    '`POST /twins/<TWIN_ID>/positions` takes it, naming its twin in `relationships.twin` (a twin of the caller\'s organization).',
  required: ['op'],
  properties: {
    op: { type: 'string', enum: ['add', 'update', 'remove'] },
    ref: { ...REFERENCE, description: 'The resource an `update` or `remove` acts on.' },
    data: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { type: 'string', enum: ['events', 'twins', 'positions'] },
        id: UUID,
        attributes: {
          anyOf: [...[CreateEventAttributes, UpdateEventAttributes, CreateTwinAttributes, UpdateTwinAttributes].map((model) => ({ $ref: getSchemaPath(model) })), POSITION_ATTRIBUTES],
        },
        relationships: { type: 'object', additionalProperties: true },
      },
    },
    meta: { type: 'object', additionalProperties: true },
  },
  additionalProperties: false,
});

export const OPERATIONS_REQUEST = {
  schema: component('AtomicOperationsDocument', {
    type: 'object',
    required: ['atomic:operations'],
    properties: { 'atomic:operations': { type: 'array', minItems: 1, maxItems: MAX_OPERATIONS, items: OPERATION } },
  }),
  examples: {
    sync: {
      summary: 'An offline sync: two new events (one named by the app), a change, a removal',
      value: {
        'atomic:operations': [
          { op: 'add', data: { type: 'events', attributes: { name: 'walk', category: 'activity', data: { steps: 4200 }, occurred: '2026-11-21T17:02:41.5Z' } } },
          { op: 'add', data: { type: 'events', id: CLIENT_CHOSEN_EXAMPLE_ID, attributes: { name: 'run', category: 'activity', data: { km: 5 } } } },
          { op: 'update', data: { type: 'events', id: EVENT_ID, attributes: { data: { steps: 5000 } } } },
          { op: 'remove', ref: { type: 'events', id: CLIENT_CHOSEN_EXAMPLE_ID } },
        ],
      },
    },
    fleet: {
      summary: "Positions of a fleet's twins, uploaded together",
      value: {
        'atomic:operations': [
          {
            op: 'add',
            data: { type: 'positions', attributes: { coordinates: [2.3522, 48.8566], occurred: '2026-11-28T08:00:00Z', speed: 8.5 }, relationships: { twin: { data: { type: 'twins', id: EXAMPLE_IDS.twins } } } },
          },
        ],
      },
    },
  },
};

export const OPERATIONS_RESULTS = {
  schema: component('AtomicResultsDocument', {
    type: 'object',
    required: ['atomic:results'],
    properties: {
      'atomic:results': {
        type: 'array',
        description: 'One result per operation, in order: `{data: resource}` (events in their `/events/` form, twins in their detail form), or `{}` for a `remove` and a position `add`.',
        items: { anyOf: [EVENT_DOCUMENT.schema, TWIN_DETAIL.schema, { type: 'object', additionalProperties: false }] },
      },
      meta: {
        type: 'object',
        additionalProperties: false,
        description: 'With position `add`s: how many the batch held, and how many were new (the others were stored before).',
        properties: {
          positions: {
            type: 'object',
            required: ['received', 'new'],
            additionalProperties: false,
            properties: { received: { type: 'integer', minimum: 1 }, new: { type: 'integer', minimum: 0 } },
          },
        },
      },
    },
    additionalProperties: false,
  }),
  example: { 'atomic:results': [{ data: EXAMPLE_EVENT }, {}] },
};
