/**
 * The OpenAPI description of the webhook routes, and of the deliveries themselves as callbacks of
 * `POST /webhooks/` (the document is OpenAPI 3.0, which has no top-level `webhooks`).
 */
import { getSchemaPath, type CallbacksObject, type ParameterObject, type SchemaObject } from '@nestjs/swagger';
import { EXAMPLE_IDS } from '../common/openapi/example-ids.js';
import { component, FREE_FORM, pageDocument, requestDocument, resourceForms, singleDocument, TIMESTAMP, URL_SCHEMA, UUID } from '../common/openapi/schemas.js';
import { CreateWebhookAttributes, UpdateWebhookAttributes } from './dto/webhook.dto.js';
import { deliveryAttemptResource, webhookResource } from './webhook.resource.js';
import { WEBHOOK_EVENT_TYPES } from './webhook-events.js';
import type { AttemptRow, WebhookRow } from './webhooks.repository.js';

const WEBHOOK_ID = EXAMPLE_IDS.webhooks;
const DELIVERY_ID = '01938c4e-7b2a-4d5e-9f10-2a3b4c5d6e7f';
const EXAMPLE_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw+YUhITuoNIk=';

const SAMPLE_ROW: WebhookRow = {
  id: WEBHOOK_ID,
  organization_id: EXAMPLE_IDS.organizations,
  url: 'https://partner.example.com/hooks/twins',
  events: ['event.created', 'twin.updated'],
  description: 'Order sync',
  enabled: true,
  previous_secret_expires: null,
  created: '2026-11-21T19:26:03.123456Z',
  modified: '2026-11-21T19:26:03.123456Z',
};

const SAMPLE_ATTEMPT: AttemptRow = {
  id: '2c4e6a8b-0d1f-4a3c-8e5b-7d9f1a3c5e7b',
  delivery_id: DELIVERY_ID,
  kind: 'event.created',
  attempt: 2,
  status_code: 503,
  error: null,
  duration_ms: 87,
  attempted: '2026-11-21T19:26:13.654321Z',
};

const sample = webhookResource(SAMPLE_ROW);
const withSecret = webhookResource(SAMPLE_ROW, EXAMPLE_SECRET);
const attempt = deliveryAttemptResource(SAMPLE_ATTEMPT);

const EVENT_TYPE: SchemaObject = { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] };

const FORMS = resourceForms({
  type: 'webhooks',
  attributes: {
    url: { ...URL_SCHEMA, description: 'Where deliveries are POSTed.' },
    events: { type: 'array', items: EVENT_TYPE, minItems: 1, description: 'The change kinds it receives.' },
    description: { type: 'string', nullable: true, maxLength: 1024 },
    enabled: { type: 'boolean', description: 'Disabled: nothing new is queued for it; what was queued waits.' },
    'previous-secret-expires': {
      ...TIMESTAMP,
      nullable: true,
      description: 'While a rotation\'s overlap lasts (`rotate-secret?previous_secret_expires_in=…`), when the replaced secret stops signing; null otherwise.',
    },
    created: TIMESTAMP,
    modified: TIMESTAMP,
    secret: {
      type: 'string',
      pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
      description: 'The signing secret (Standard Webhooks form). Shown in this answer only: store it now; `rotate-secret` makes a new one.',
    },
  },
  forms: {
    WebhookResource: { sample, description: 'A webhook of the organization.' },
    WebhookWithSecretResource: { sample: withSecret, description: 'A webhook with its new signing secret (the answer of a create or a rotation).' },
  },
});

const ATTEMPT_FORMS = resourceForms({
  type: 'webhook-deliveries',
  attributes: {
    'webhook-id': { ...UUID, description: 'The `webhook-id` header of the delivery: the same on every attempt of one change to one webhook.' },
    'event-type': EVENT_TYPE,
    attempt: { type: 'integer', minimum: 1, description: '1 for the first attempt of the delivery.' },
    'status-code': { type: 'integer', nullable: true, description: "The receiver's HTTP status; null when none came (see `error`)." },
    error: { type: 'string', nullable: true, description: 'Why no status came: a timeout, a refused or unreachable address, a connection error.' },
    'duration-ms': { type: 'integer', minimum: 0 },
    attempted: TIMESTAMP,
  },
  forms: { WebhookDeliveryResource: { sample: attempt, description: 'One attempt to deliver a change.' } },
});

export const WEBHOOK_DOCUMENT = singleDocument('WebhookDocument', FORMS.WebhookResource, sample);
export const WEBHOOK_SECRET_DOCUMENT = singleDocument('WebhookWithSecretDocument', FORMS.WebhookWithSecretResource, withSecret);
export const WEBHOOK_PAGE = pageDocument('WebhookListDocument', FORMS.WebhookResource, { path: '/webhooks/', items: [sample] });
export const DELIVERY_PAGE = pageDocument('WebhookDeliveryListDocument', ATTEMPT_FORMS.WebhookDeliveryResource, { path: `/webhooks/${WEBHOOK_ID}/deliveries/`, items: [attempt] });

export const WEBHOOK_CREATE_REQUEST = {
  schema: requestDocument('WebhookCreateDocument', {
    type: 'webhooks',
    description: '`{data: {type: "webhooks", attributes: {url, events, description?}}}`',
    attributes: { $ref: getSchemaPath(CreateWebhookAttributes) },
    attributesRequired: true,
    id: 'forbidden',
  }),
  examples: {
    webhook: {
      summary: 'New events and twin changes',
      value: { data: { type: 'webhooks', attributes: { url: 'https://partner.example.com/hooks/twins', events: ['event.created', 'twin.updated'], description: 'Order sync' } } },
    },
  },
};

export const WEBHOOK_UPDATE_REQUEST = {
  schema: requestDocument('WebhookUpdateDocument', {
    type: 'webhooks',
    description: '`{data: {type: "webhooks", id, attributes}}`: `id` must be the path id; the attributes given change.',
    attributes: { $ref: getSchemaPath(UpdateWebhookAttributes) },
    id: 'required',
  }),
  examples: {
    disable: { summary: 'Pause deliveries', value: { data: { type: 'webhooks', id: WEBHOOK_ID, attributes: { enabled: false } } } },
    events: { summary: 'Change the subscription', value: { data: { type: 'webhooks', id: WEBHOOK_ID, attributes: { events: ['event.created', 'event.deleted'] } } } },
  },
};

/** The body of a delivery: `{type, timestamp, data}`, the same bytes on every attempt. */
const DELIVERY_PAYLOAD = component('WebhookPayload', {
  type: 'object',
  required: ['type', 'timestamp', 'data'],
  properties: {
    type: EVENT_TYPE,
    timestamp: { ...TIMESTAMP, description: 'When the change was committed (UTC, microseconds).' },
    data: {
      ...FREE_FORM,
      description:
        'The changed resource as committed, in the form its own route answers (an `events`, `twins` or `quests` resource object); for `event.deleted` its identifier `{type, id}`.',
    },
  },
  additionalProperties: false,
});

const signatureHeader = (name: string, description: string, schema: SchemaObject): ParameterObject => ({ name, in: 'header', required: true, description, schema });

/** `callbacks` of `POST /webhooks/`: what the service sends to the webhook's URL. */
export const DELIVERY_CALLBACKS: CallbacksObject = {
  delivery: {
    '{$request.body#/data/attributes/url}': {
      post: {
        summary: 'A delivery (Standard Webhooks)',
        // The receiver authenticates the service by the signature, not by credentials of this API.
        security: [],
        description:
          'Sent for every change of a subscribed kind in the organization, at least once: retried with exponential backoff and jitter for 24 hours on ' +
          'anything but a 2xx within 10 seconds. Verify the signature (docs/WEBHOOKS.md) and deduplicate on `webhook-id`.',
        parameters: [
          signatureHeader('webhook-id', 'The delivery id: the same on every attempt (deduplicate on it).', UUID),
          signatureHeader('webhook-timestamp', 'Seconds since the epoch when this attempt was signed.', { type: 'string', pattern: '^\\d+$' }),
          signatureHeader('webhook-signature', '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` under the secret (after `whsec_`, base64-decoded).', {
            type: 'string',
            pattern: '^v1,[A-Za-z0-9+/]+={0,2}$',
          }),
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: DELIVERY_PAYLOAD,
              example: {
                type: 'event.created',
                timestamp: '2026-11-21T19:26:03.123456Z',
                data: { type: 'events', id: EXAMPLE_IDS.events, attributes: { name: 'walk', category: 'activity', data: { steps: 4200 }, timestamp: '2026-11-21T19:26:03.123456Z', occurred: null } },
              },
            },
          },
        },
        responses: {
          '200': { description: 'Any 2xx: delivered.' },
          '4XX': { description: 'Not delivered: retried later (a receiver that means "stop" disables or deletes the webhook).' },
          default: { description: 'Anything else (or no answer within the timeout): retried later.' },
        },
      },
    },
  },
};
