import { invalidParameter } from '../common/json-api/api-error.js';
import { params, readQuery } from '../common/json-api/query.js';
import { readBoundingBox, readDistance, readLonLat, type BoundingBox, type LonLat } from './twin-geo.js';

/** The spatial part, accepted by both twin lists (`/twins/`, its geo form, and `/my/twins/`). */
export interface SpatialFilters {
  in_bbox?: BoundingBox;
  point?: LonLat;
  dist?: number;
  ordering?: 'distance';
}

/** Every filter of `GET /twins/` (docs/API.md, section 9), as read from the query string. */
export interface TwinFilters extends SpatialFilters {
  is_public?: boolean;
  is_personal?: boolean;
  personality?: string;
  characteristics?: string[];
  organization?: string;
  is_connection?: boolean;
  is_supplier?: boolean;
}

const SPATIAL_READERS = {
  in_bbox: readBoundingBox,
  point: readLonLat,
  dist: readDistance,
  ordering: params.oneOf('distance'),
};

/**
 * Reads the filters of `GET /twins/`. Unknown names and malformed values are 400s naming the
 * parameter; so are combinations that mean nothing (`dist` without `point`, `ordering=distance`
 * without `point`, `point` with neither `dist` nor `ordering=distance`).
 */
export function readTwinFilters(query: Record<string, unknown>): TwinFilters {
  const filters = readQuery<TwinFilters>(
    query,
    {
      is_public: params.boolean,
      is_personal: params.boolean,
      personality: params.uuid,
      characteristics: params.list,
      organization: params.uuid,
      is_connection: params.boolean,
      is_supplier: params.boolean,
      ...SPATIAL_READERS,
    },
    { paginated: true },
  );
  checkSpatial(filters);
  return filters;
}

/** Reads the filters of `GET /my/twins/`: only the spatial ones. */
export function readOwnTwinFilters(query: Record<string, unknown>): SpatialFilters {
  const filters = readQuery<SpatialFilters>(query, SPATIAL_READERS, { paginated: true });
  checkSpatial(filters);
  return filters;
}

function checkSpatial(filters: SpatialFilters): void {
  if (filters.dist !== undefined && !filters.point) throw invalidParameter('dist', 'dist needs point=lon,lat.');
  if (filters.ordering === 'distance' && !filters.point) throw invalidParameter('ordering', 'ordering=distance needs point=lon,lat.');
  if (filters.point && filters.dist === undefined && filters.ordering !== 'distance') {
    throw invalidParameter('point', 'point needs dist=<metres> (within a distance) or ordering=distance (nearest first).');
  }
}
