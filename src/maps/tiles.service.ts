import { Inject, Injectable } from '@nestjs/common';
import type { Tenant } from '../common/auth/tenant.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { connectionTwinId, type TwinFilterValues } from '../twins/twin-conditions.js';
import { TWIN_FILTER_PARAMETERS } from '../twins/twin-filters.js';
import { latitudeOf, longitudeOf, MAX_TILE_ZOOM, WORLD_BOUNDS, zoomToFit, type LonLatBounds, type Tile } from './tile-coordinates.js';
import type { TileQuery } from './tile-query.js';
import { TilesRepository } from './tiles.repository.js';

/** The members of a tile's features: a twin's (points) or a cell's (clusters). TileJSON lists them. */
export const TILE_FIELDS = {
  id: 'String',
  name: 'String',
  public: 'Boolean',
  supplier: 'Boolean',
  count: 'Number',
  cluster: 'Boolean',
} as const;

/** The zoom a TileJSON `center` asks for at most: deeper than this, a map shows a street, not where the twins are. */
const CENTER_MAX_ZOOM = 16;

/** A TileJSON 3.0.0 document (https://github.com/mapbox/tilejson-spec/tree/master/3.0.0). */
export interface TileJson {
  tilejson: '3.0.0';
  name: string;
  description: string;
  scheme: 'xyz';
  tiles: string[];
  minzoom: number;
  maxzoom: number;
  bounds: LonLatBounds;
  center: [number, number, number];
  vector_layers: { id: 'twins'; description: string; minzoom: number; maxzoom: number; fields: typeof TILE_FIELDS }[];
}

/** The filters of a tile query (its representation members, `fields` and `include`, are none). */
function filtersOf(tenant: Tenant, query: TileQuery): TwinFilterValues {
  const filters: TwinFilterValues = { actingTwinId: connectionTwinId(tenant, query) };
  for (const name of Object.keys(TWIN_FILTER_PARAMETERS) as (keyof typeof TWIN_FILTER_PARAMETERS)[]) {
    if (query[name] !== undefined) Object.assign(filters, { [name]: query[name] });
  }
  return filters;
}

@Injectable()
export class TilesService {
  constructor(
    private readonly tiles: TilesRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** `GET /twins/tiles/<z>/<x>/<y>.mvt`: the tile's bytes, or undefined when it is empty. */
  tile(tenant: Tenant, tile: Tile, query: TileQuery): Promise<Buffer | undefined> {
    return this.tiles.tile(tenant, tile, filtersOf(tenant, query), this.config.tileMaxFeatures);
  }

  /**
   * `GET /twins/tiles.json`: the tiles of the same filters (the request's query string, which holds
   * nothing else, goes into the URL template), bounded by the twins they show.
   */
  async tileJson(tenant: Tenant, query: TileQuery, requestUrl: URL): Promise<TileJson> {
    const extent = await this.tiles.extent(tenant, filtersOf(tenant, query));
    const bounds: LonLatBounds = extent ? [longitudeOf(extent[0]), latitudeOf(extent[3]), longitudeOf(extent[2]), latitudeOf(extent[1])] : WORLD_BOUNDS;
    const center: [number, number, number] = extent
      ? [longitudeOf((extent[0] + extent[2]) / 2), latitudeOf((extent[1] + extent[3]) / 2), zoomToFit(bounds, CENTER_MAX_ZOOM)]
      : [0, 0, 0];
    const base = requestUrl.pathname.replace(/tiles\.json$/, 'tiles');
    return {
      tilejson: '3.0.0',
      name: 'twins',
      description: `The twins organization ${tenant.organization.id} sees${requestUrl.search ? `, filtered by ${requestUrl.search.slice(1)}` : ''}.`,
      scheme: 'xyz',
      tiles: [`${requestUrl.origin}${base}/{z}/{x}/{y}.mvt${requestUrl.search}`],
      minzoom: 0,
      maxzoom: MAX_TILE_ZOOM,
      bounds,
      center,
      vector_layers: [
        {
          id: 'twins',
          description: `A 64 × 64 grid over each tile: a cell of one twin is its point (id, name, public, supplier), of more one point with their exact count (count, cluster). From zoom 17, every twin its own point while a tile holds at most ${this.config.tileMaxFeatures}.`,
          minzoom: 0,
          maxzoom: MAX_TILE_ZOOM,
          fields: TILE_FIELDS,
        },
      ],
    };
  }
}
