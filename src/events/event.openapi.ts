/** The OpenAPI description of the timeline event routes: the event resource, its documents and examples. */
import { getSchemaPath } from '@nestjs/swagger';
import { CLIENT_CHOSEN_EXAMPLE_ID, EXAMPLE_IDS } from '../common/openapi/example-ids.js';
import { FREE_FORM, pageDocument, requestDocument, resourceForms, singleDocument, TIMESTAMP } from '../common/openapi/schemas.js';
import { CreateEventAttributes, UpdateEventAttributes } from './dto/event.dto.js';
import { MAX_EVENT_DATA_BYTES } from './event-data.js';
import { eventResource } from './event.resource.js';
import type { EventRow } from './events.repository.js';

export const EVENT_ID = EXAMPLE_IDS.events;

const SAMPLE_ROW: EventRow = {
  id: EVENT_ID,
  name: 'walk',
  category: 'activity',
  data: { steps: 4200, device: 'watch', route: { km: 3.2 } },
  timestamp: '2026-11-21T19:26:03.123456Z',
  occurred: '2026-11-21T17:02:41.500000Z',
};
export const EXAMPLE_EVENT = eventResource(SAMPLE_ROW);

const FORMS = resourceForms({
  type: 'events',
  attributes: {
    name: { type: 'string', minLength: 1, maxLength: 255 },
    category: { type: 'string', minLength: 1, maxLength: 255 },
    data: { ...FREE_FORM, description: `Free-form JSON object (at most ${MAX_EVENT_DATA_BYTES} bytes as compact JSON), returned as sent (member order aside).` },
    timestamp: { ...TIMESTAMP, description: 'When the service stored the event; never changes.' },
    occurred: {
      ...TIMESTAMP,
      nullable: true,
      description: "When the event happened by the device's clock, as the client sent it (in UTC, six fraction digits); null when not sent.",
    },
  },
  forms: { EventResource: { sample: EXAMPLE_EVENT, description: 'A timeline event. The id is a UUIDv7: ids sort by creation time.' } },
});

export const EVENT_DOCUMENT = singleDocument('EventDocument', FORMS.EventResource, EXAMPLE_EVENT);
export const EVENT_PAGE = pageDocument('EventListDocument', FORMS.EventResource, { path: '/events/', items: [EXAMPLE_EVENT] });
export const UPDATED_EVENT_DOCUMENT = {
  ...EVENT_DOCUMENT,
  example: { data: eventResource({ ...SAMPLE_ROW, category: 'sport', data: { steps: 5000, route: { km: 3.2 } } }) },
};

export const EVENT_CREATE_REQUEST = {
  schema: requestDocument('EventCreateDocument', {
    type: 'events',
    description:
      '`{data: {type: "events", id?, attributes: {name, category, data, occurred?}}}`; the service makes the timestamp (sending it is refused) and, unless `id` names one, the id.',
    attributes: { $ref: getSchemaPath(CreateEventAttributes) },
    attributesRequired: true,
    id: 'client',
  }),
  examples: {
    event: {
      summary: 'A walk',
      value: { data: { type: 'events', attributes: { name: 'walk', category: 'activity', data: { steps: 4200, device: 'watch', route: { km: 3.2 } } } } },
    },
    offline: {
      summary: 'Recorded offline: the app chose the id and says when it happened',
      value: {
        data: {
          type: 'events',
          id: CLIENT_CHOSEN_EXAMPLE_ID,
          attributes: { name: 'walk', category: 'activity', data: { steps: 4200 }, occurred: '2026-11-21T18:02:41.5+01:00' },
        },
      },
    },
  },
};

export const EVENT_UPDATE_REQUEST = {
  schema: requestDocument('EventUpdateDocument', {
    type: 'events',
    description: '`{data: {type: "events", id, attributes}}`: `id` is required and must be the path id; the keys of `data` are merged.',
    attributes: { $ref: getSchemaPath(UpdateEventAttributes) },
    id: 'required',
  }),
  examples: {
    merge: {
      summary: 'Replace `steps`, remove `device`, keep the rest',
      value: { data: { type: 'events', id: EVENT_ID, attributes: { category: 'sport', data: { steps: 5000, device: null } } } },
    },
  },
};

export const EVENT_DELETE_REQUEST = {
  schema: requestDocument('EventDeleteDocument', {
    type: 'events',
    description: 'Optional: `{data: {type: "events", id}}`, whose `id`, when given, must be the path id.',
    id: 'optional',
  }),
  examples: { contract: { summary: 'The identifier of the event', value: { data: { type: 'events', id: EVENT_ID } } } },
};
