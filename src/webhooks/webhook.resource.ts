import type { ResourceObject } from '../common/json-api/resource.js';
import type { AttemptRow, WebhookRow } from './webhooks.repository.js';

/** A webhook; `secret` only in the answers that make one (create, rotate-secret): it is never shown again. */
export function webhookResource(row: WebhookRow, secret?: string): ResourceObject {
  return {
    type: 'webhooks',
    id: row.id,
    attributes: {
      url: row.url,
      events: row.events,
      description: row.description,
      enabled: row.enabled,
      'previous-secret-expires': row.previous_secret_expires,
      created: row.created,
      modified: row.modified,
      ...(secret === undefined ? {} : { secret }),
    },
  };
}

/** One attempt to deliver a change to a webhook. */
export function deliveryAttemptResource(row: AttemptRow): ResourceObject {
  return {
    type: 'webhook-deliveries',
    id: row.id,
    attributes: {
      'webhook-id': row.delivery_id,
      'event-type': row.kind,
      attempt: row.attempt,
      'status-code': row.status_code,
      error: row.error,
      'duration-ms': row.duration_ms,
      attempted: row.attempted,
    },
  };
}
