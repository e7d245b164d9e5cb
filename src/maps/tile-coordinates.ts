import { invalidParameter } from '../common/json-api/api-error.js';

/** The deepest zoom of the tile pyramid (docs/API.md, Vector tiles). */
export const MAX_TILE_ZOOM = 22;
/** Web Mercator stops here: the latitude whose y fraction is 0 (the north edge of tile 0/0/0). */
const MERCATOR_MAX_LATITUDE = 85.0511287798066;

/** One tile of the XYZ scheme (Web Mercator, y from the north). */
export interface Tile {
  z: number;
  x: number;
  y: number;
}

/** A box in degrees: west, south, east, north (TileJSON's `bounds` order). */
export type LonLatBounds = [west: number, south: number, east: number, north: number];

const readInteger = (name: string, raw: string, max: number): number => {
  const value = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  if (!(value <= max)) throw invalidParameter(name, `${name} must be an integer from 0 to ${max}.`);
  return value;
};

/** The tile a path names; 400 naming `z`, `x` or `y` when one is not an integer of the pyramid. */
export function readTile(raw: { z: string; x: string; y: string }): Tile {
  const z = readInteger('z', raw.z, MAX_TILE_ZOOM);
  const last = 2 ** z - 1;
  return { z, x: readInteger('x', raw.x, last), y: readInteger('y', raw.y, last) };
}

/** The longitude of a Web Mercator x fraction (0 west, 1 east). */
export const longitudeOf = (fx: number): number => fx * 360 - 180;
/** The latitude of a Web Mercator y fraction (0 north, 1 south). */
export const latitudeOf = (fy: number): number => (Math.atan(Math.sinh(Math.PI * (1 - 2 * fy))) * 180) / Math.PI;

/** The whole Web Mercator world, where no twin is located. */
export const WORLD_BOUNDS: LonLatBounds = [-180, -MERCATOR_MAX_LATITUDE, 180, MERCATOR_MAX_LATITUDE];

/** The deepest zoom (at most `maxZoom`) at which `bounds` fits in one tile's width and height: a map's starting view. */
export function zoomToFit([west, south, east, north]: LonLatBounds, maxZoom: number): number {
  const yFraction = (lat: number) => (1 - Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360)) / Math.PI) / 2;
  const span = Math.max((east - west) / 360, yFraction(south) - yFraction(north));
  return span <= 0 ? maxZoom : Math.max(0, Math.min(maxZoom, Math.floor(Math.log2(1 / span))));
}

/** The cells a side of `tile_key` (migration TwinTileKeys): 2^31, Z-order codes of 62 bits. */
const KEY_LEVEL = 31;

/** The Z-order code of cell (x, y) of a 2^level grid: x's bits at the even places, y's at the odd. */
function morton(x: number, y: number): bigint {
  let code = 0n;
  for (let bit = 0; bit < KEY_LEVEL; bit++) {
    code |= BigInt((x >>> bit) & 1) << BigInt(2 * bit);
    code |= BigInt((y >>> bit) & 1) << BigInt(2 * bit + 1);
  }
  return code;
}

/** The `tile_key` range of a tile's twins: from the first key in it to the first key past it. */
export function tileKeyRange({ z, x, y }: Tile): [from: string, to: string] {
  const shift = BigInt(2 * (KEY_LEVEL - z));
  const code = morton(x, y);
  return [(code << shift).toString(), ((code + 1n) << shift).toString()];
}
