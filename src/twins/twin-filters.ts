import { invalidParameter } from '../common/json-api/api-error.js';
import { declareQuery, param, type QueryOf } from '../common/json-api/query.js';
import type { SortDirective } from '../common/json-api/representation.js';
import { ORGANIZATION_FIELDS } from '../organizations/organization.resource.js';
import { readBoundingBox, readDistance, readLonLat, type LonLat } from './twin-geo.js';
import { TWIN_FIELDS } from './twin.resource.js';

/** `sort` of the twin lists; `distance` needs `point`. */
const TWIN_SORT = ['name', 'created', 'modified', 'distance'];
/** A twin's organization may be included, and fields of both chosen. */
const representation = (form: keyof typeof TWIN_FIELDS) => ({
  fields: { twins: TWIN_FIELDS[form], organizations: ORGANIZATION_FIELDS },
  include: ['organization'],
});

/**
 * Which twins a list shows, beside visibility: the filters of `GET /twins/` that the vector tiles of
 * the maps feature take too (its query declares these very parameters; twin-conditions.ts writes their SQL).
 */
export const TWIN_FILTER_PARAMETERS = {
  is_public: param.boolean('Only public twins (false: only non-public).'),
  is_personal: param.boolean('Only twins created by the calling account (false: the others).'),
  characteristics: param.list('Comma-separated; twins having all of them.', 'outdoors,history'),
  organization: param.uuid('Only twins of this organization (that the caller can see).'),
  is_connection: param.boolean('Only twins in the `connections` of the `X-Twin` twin (false: the others).'),
  is_supplier: param.boolean('Only twins with a non-empty `personality.services` (false: the others).'),
};

/** The spatial part, accepted by both twin lists (`/twins/`, its geo form, and `/my/twins/`). */
const SPATIAL_PARAMETERS = {
  in_bbox: param.custom(readBoundingBox)('minLon,minLat,maxLon,maxLat (degrees, min ≤ max).', '2.2,48.8,2.5,48.9'),
  point: param.custom(readLonLat)('lon,lat; with `dist` and/or `ordering=distance`.', '2.3522,48.8566'),
  dist: param.custom(readDistance, { type: 'number', minimum: 0, maximum: 20037509 })('Metres from `point` (0 to 20037509).', 5000),
  ordering: param.oneOf('distance')('Nearest to `point` first.'),
};

/**
 * `GET /twins/` (docs/API.md, section 9), both forms. Combinations that mean nothing are 400s too
 * (`dist` without `point`, `ordering=distance` without `point`, `point` with neither `dist` nor
 * `ordering=distance`).
 */
export const TWIN_LIST_QUERY = declareQuery(
  {
    ...TWIN_FILTER_PARAMETERS,
    personality: param.uuid('Other twins sharing a characteristic with this twin, most shared first.'),
    ...SPATIAL_PARAMETERS,
  },
  {
    paginated: true,
    cursor: true,
    pageDocs: { maxSize: 10000, description: 'Default 50, at most 100; geo listing: default 1000, at most 10000.' },
    check: checkSpatial,
    sort: TWIN_SORT,
    ...representation('list'),
  },
);

/** `GET /my/twins/`: only the spatial filters. */
export const OWN_TWIN_LIST_QUERY = declareQuery(SPATIAL_PARAMETERS, { paginated: true, cursor: true, check: checkSpatial, sort: TWIN_SORT, ...representation('own') });

/** `GET /twins/<TWIN_ID>/`: the detail form's fields, and its organization. */
export const TWIN_DETAIL_QUERY = declareQuery({}, representation('detail'));
export type TwinDetailQuery = QueryOf<typeof TWIN_DETAIL_QUERY.parameters>;

export type TwinListQuery = QueryOf<typeof TWIN_LIST_QUERY.parameters, true>;
export type OwnTwinListQuery = QueryOf<typeof OWN_TWIN_LIST_QUERY.parameters, true>;

/** The filters of a twin list (its query without the page and the representation). */
export type TwinFilters = Omit<TwinListQuery, 'page' | 'fields' | 'include' | 'sort'>;

function checkSpatial(filters: { point?: LonLat; dist?: number; ordering?: 'distance'; sort?: readonly SortDirective[] }): void {
  const sortsByDistance = filters.sort?.some((s) => s.key === 'distance') ?? false;
  if (filters.dist !== undefined && !filters.point) throw invalidParameter('dist', 'dist needs point=lon,lat.');
  if (filters.ordering === 'distance' && !filters.point) throw invalidParameter('ordering', 'ordering=distance needs point=lon,lat.');
  if (sortsByDistance && !filters.point) throw invalidParameter('sort', 'sort=distance needs point=lon,lat.');
  if (filters.ordering !== undefined && filters.sort !== undefined) throw invalidParameter('sort', 'Give sort or ordering, not both (ordering=distance is sort=distance).');
  if (filters.point && filters.dist === undefined && filters.ordering !== 'distance' && !sortsByDistance) {
    throw invalidParameter('point', 'point needs dist=<metres> (within a distance) or ordering=distance (nearest first).');
  }
}
