import { declareQuery, type QueryOf } from '../common/json-api/query.js';

/** `GET /geofences/` and `GET /geofences/<ID>/twins/`: pages only. */
export const GEOFENCE_LIST_QUERY = declareQuery({}, { paginated: true });
export type GeofenceListQuery = QueryOf<typeof GEOFENCE_LIST_QUERY.parameters, true>;
