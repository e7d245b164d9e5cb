import { declareQuery, type QueryOf } from '../common/json-api/query.js';

/** `GET /webhooks/` and `GET /webhooks/<ID>/deliveries/`: pages only. */
export const WEBHOOK_LIST_QUERY = declareQuery({}, { paginated: true });
export type WebhookListQuery = QueryOf<typeof WEBHOOK_LIST_QUERY.parameters, true>;
