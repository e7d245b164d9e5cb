import { MAX_TILE_ZOOM } from './tile-coordinates.js';
import { TILE_FIELDS } from './tiles.service.js';

/** Mapbox Vector Tile 2.1 (protocol buffers). */
export const MVT_MEDIA_TYPE = 'application/vnd.mapbox-vector-tile';

export const TILE_DESCRIPTION =
  'A Mapbox Vector Tile (spec 2.1, XYZ scheme, Web Mercator) of the twins the caller sees, filtered like `GET /twins/`: one layer `twins`, extent 4096, buffer 64. ' +
  'A twin is in the tile whose bounds hold its location (one tile per zoom; twins beyond ±85.0511° are in none). ' +
  'Drawn on a 64 × 64 grid over the tile: a cell of one twin is its point, with `id`, `name`, `public`, `supplier`; ' +
  'a cell of two or more is one point at their centre of mass with `count` (their exact number) and `cluster: true`; counts and points add up to the twins of the tile. ' +
  'From zoom 17 on every twin is its own point, unless the tile holds more than `TILE_MAX_FEATURES` twins (default 4096): then the grid again. An empty tile is a 204. The ETag is the tile\'s content: it changes when a twin in the tile changes what the tile shows.';

export const TILE_PATH_PARAMETERS = [
  { name: 'z', in: 'path' as const, required: true, description: `Zoom, 0 to ${MAX_TILE_ZOOM}.`, schema: { type: 'integer' as const, minimum: 0, maximum: MAX_TILE_ZOOM }, example: 4 },
  { name: 'x', in: 'path' as const, required: true, description: 'Column, 0 to 2^z − 1 (west to east).', schema: { type: 'integer' as const, minimum: 0 }, example: 8 },
  { name: 'y', in: 'path' as const, required: true, description: 'Row, 0 to 2^z − 1 (north to south).', schema: { type: 'integer' as const, minimum: 0 }, example: 5 },
];

export const TILE_JSON_SCHEMA = {
  type: 'object',
  description: 'TileJSON 3.0.0.',
  required: ['tilejson', 'tiles', 'minzoom', 'maxzoom', 'bounds', 'center', 'vector_layers'],
  properties: {
    tilejson: { type: 'string', enum: ['3.0.0'] },
    name: { type: 'string' },
    description: { type: 'string' },
    scheme: { type: 'string', enum: ['xyz'] },
    tiles: { type: 'array', items: { type: 'string' }, description: 'One absolute URL template with the request\'s filter parameters.' },
    minzoom: { type: 'integer' },
    maxzoom: { type: 'integer' },
    bounds: { type: 'array', items: { type: 'number' }, minItems: 4, maxItems: 4, description: 'West, south, east, north of the twins shown (degrees); the whole Web Mercator world when there are none.' },
    center: { type: 'array', items: { type: 'number' }, minItems: 3, maxItems: 3, description: 'Longitude, latitude and zoom of a view that shows them.' },
    vector_layers: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'fields'],
        properties: {
          id: { type: 'string', enum: ['twins'] },
          description: { type: 'string' },
          minzoom: { type: 'integer' },
          maxzoom: { type: 'integer' },
          fields: { type: 'object', additionalProperties: { type: 'string' } },
        },
      },
    },
  },
};

export const TILE_JSON_EXAMPLE = {
  tilejson: '3.0.0',
  name: 'twins',
  description: 'The twins organization 0b9a6f4e-8d1c-4f5e-9a3b-2c7d1e0f4a5b sees, filtered by is_public=true.',
  scheme: 'xyz',
  tiles: ['https://api.example.com/twins/tiles/{z}/{x}/{y}.mvt?is_public=true'],
  minzoom: 0,
  maxzoom: MAX_TILE_ZOOM,
  bounds: [2.2, 48.8, 2.5, 48.95],
  center: [2.35, 48.875, 10],
  vector_layers: [{ id: 'twins', description: 'One point per twin …', minzoom: 0, maxzoom: MAX_TILE_ZOOM, fields: TILE_FIELDS }],
};
