import { CHANGE_KINDS } from '../database/change-log.js';

/** The change kinds a webhook may subscribe to: exactly the kinds the change log records. */
export const WEBHOOK_EVENT_TYPES = CHANGE_KINDS;
