/** The change kinds a webhook may subscribe to: exactly the `kind`s the change log writes (schema/changes.ts). */
export const WEBHOOK_EVENT_TYPES = ['event.created', 'event.updated', 'event.deleted', 'twin.created', 'twin.updated', 'quest.published', 'quest.embarked'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
