import { declareQuery, param, type QueryOf } from '../common/json-api/query.js';

/** `GET /webhooks/` and `GET /webhooks/<ID>/deliveries/`: pages only. */
export const WEBHOOK_LIST_QUERY = declareQuery({}, { paginated: true });
export type WebhookListQuery = QueryOf<typeof WEBHOOK_LIST_QUERY.parameters, true>;

/** The longest a replaced secret may keep signing after a rotation: as long as a delivery is retried. */
export const MAX_SECRET_OVERLAP_SECONDS = 86_400;

/** `POST /webhooks/<ID>/rotate-secret`: how long the replaced secret keeps signing beside the new one. */
export const ROTATE_SECRET_QUERY = declareQuery({
  previous_secret_expires_in: param.number(0, MAX_SECRET_OVERLAP_SECONDS)(
    'Seconds the replaced secret keeps signing beside the new one (each delivery then carries two signatures), so receivers can ' +
      'switch secrets without refusing a delivery; 0 (the default) retires it at once, as after a leak.',
    3600,
  ),
});
export type RotateSecretQuery = QueryOf<typeof ROTATE_SECRET_QUERY.parameters>;
