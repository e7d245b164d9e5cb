import type { ResourceObject } from '../common/json-api/resource.js';
import { ResourceForm, timestamp } from '../common/json-api/resource-sql.js';
import type { AttemptRow, WebhookRow } from './webhooks.repository.js';

const WEBHOOK = new ResourceForm<WebhookRow>({
  type: 'webhooks',
  attributes: {
    url: 'url',
    events: 'events',
    description: 'description',
    enabled: 'enabled',
    'previous-secret-expires': timestamp('previous_secret_expires'),
    created: timestamp('created'),
    modified: timestamp('modified'),
  },
});

/** A webhook; `secret` only in the answers that make one (create, rotate-secret): it is never shown again. */
export function webhookResource(row: WebhookRow, secret?: string): ResourceObject {
  const resource = WEBHOOK.resource(row);
  if (secret !== undefined) resource.attributes.secret = secret;
  return resource;
}

const DELIVERY_ATTEMPT = new ResourceForm<AttemptRow>({
  type: 'webhook-deliveries',
  attributes: {
    'webhook-id': 'delivery_id',
    'event-type': 'kind',
    attempt: 'attempt',
    'status-code': 'status_code',
    error: 'error',
    'duration-ms': 'duration_ms',
    attempted: timestamp('attempted'),
  },
});

/** One attempt to deliver a change to a webhook. */
export const deliveryAttemptResource = (row: AttemptRow): ResourceObject => DELIVERY_ATTEMPT.resource(row);
