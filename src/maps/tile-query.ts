import { declareQuery, type QueryOf } from '../common/json-api/query.js';
import { TWIN_FILTER_PARAMETERS } from '../twins/twin-filters.js';

/** The vector tiles and their TileJSON take the filters of `GET /twins/` (not its paging, order or spatial ones: a tile is the place). */
export const TILE_QUERY = declareQuery(TWIN_FILTER_PARAMETERS);
export type TileQuery = QueryOf<typeof TILE_QUERY.parameters>;
