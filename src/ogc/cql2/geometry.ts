import { FilterError, type GeoJsonGeometry } from './cql2-ast.js';

/**
 * Geometry literals of a filter, as GeoJSON (RFC 7946) in CRS84: a cql2-json literal is read with
 * readGeoJsonGeometry, a WKT literal of cql2-text is parsed into the same objects. Their shape is checked
 * here (positions of 2 or 3 finite numbers, lines of 2 positions or more, closed rings of 4 or more), so
 * PostGIS is only handed geometries it can build.
 */

const isPosition = (value: unknown): value is number[] =>
  Array.isArray(value) && (value.length === 2 || value.length === 3) && value.every((n) => typeof n === 'number' && Number.isFinite(n));

function positions(value: unknown, what: string, min: number): number[][] {
  if (!Array.isArray(value) || !value.every(isPosition)) throw new FilterError(`${what}: expected an array of positions ([x, y] or [x, y, z]).`);
  if (value.length < min) throw new FilterError(`${what}: at least ${min} positions, got ${value.length}.`);
  return value;
}

function ring(value: unknown, what: string): number[][] {
  const points = positions(value, what, 4);
  const [first, last] = [points[0], points[points.length - 1]];
  if (first.length !== last.length || first.some((n, i) => n !== last[i])) throw new FilterError(`${what}: a ring must end where it starts.`);
  return points;
}

const rings = (value: unknown, what: string): void => {
  if (!Array.isArray(value) || value.length === 0) throw new FilterError(`${what}: expected an array of linear rings.`);
  value.forEach((r, i) => ring(r, `${what} ring ${i + 1}`));
};

const listOf = (value: unknown, what: string, each: (item: unknown, where: string) => void): void => {
  if (!Array.isArray(value) || value.length === 0) throw new FilterError(`${what}: expected a non-empty array.`);
  value.forEach((item, i) => each(item, `${what} part ${i + 1}`));
};

const CHECKS: Record<Exclude<GeoJsonGeometry['type'], 'GeometryCollection'>, (coordinates: unknown, what: string) => void> = {
  Point: (c, what) => {
    if (!isPosition(c)) throw new FilterError(`${what}: a Point's coordinates are one position [x, y].`);
  },
  MultiPoint: (c, what) => void positions(c, what, 1),
  LineString: (c, what) => void positions(c, what, 2),
  MultiLineString: (c, what) => listOf(c, what, (line, where) => positions(line, where, 2)),
  Polygon: (c, what) => rings(c, what),
  MultiPolygon: (c, what) => listOf(c, what, (polygon, where) => rings(polygon, where)),
};

/** A GeoJSON geometry object, checked; `depth` bounds nested collections. */
export function readGeoJsonGeometry(value: unknown, depth = 0): GeoJsonGeometry {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new FilterError('A geometry must be a GeoJSON geometry object.');
  const { type } = value as { type?: unknown };
  if (type === 'GeometryCollection') {
    const { geometries } = value as { geometries?: unknown };
    if (depth > 8) throw new FilterError('GeometryCollection nested too deeply.');
    if (!Array.isArray(geometries)) throw new FilterError('A GeometryCollection needs "geometries", an array of geometries.');
    return { type, geometries: geometries.map((g) => readGeoJsonGeometry(g, depth + 1)) };
  }
  if (typeof type !== 'string' || !Object.hasOwn(CHECKS, type)) {
    throw new FilterError(`Unknown geometry type ${JSON.stringify(type)}: Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon or GeometryCollection.`);
  }
  const { coordinates } = value as { coordinates?: unknown };
  CHECKS[type as keyof typeof CHECKS](coordinates, type);
  return { type: type as GeoJsonGeometry['type'], coordinates };
}

/**
 * BBOX(minx, miny, maxx, maxy) (or with minz/maxz) as a polygon; a box whose west edge is east of its
 * east edge crosses the antimeridian, and is the two boxes on either side of it.
 */
export function bboxGeometry(numbers: readonly number[]): GeoJsonGeometry {
  if ((numbers.length !== 4 && numbers.length !== 6) || !numbers.every(Number.isFinite)) throw new FilterError('A bbox is 4 numbers (minx, miny, maxx, maxy) or 6 (with minz and maxz).');
  const [west, south, east, north] = numbers.length === 6 ? [numbers[0], numbers[1], numbers[3], numbers[4]] : numbers;
  if (south > north) throw new FilterError(`A bbox's miny (${south}) must not be above its maxy (${north}).`);
  const box = (w: number, e: number) => [[[w, south], [e, south], [e, north], [w, north], [w, south]]];
  if (west <= east) return { type: 'Polygon', coordinates: box(west, east) };
  return { type: 'MultiPolygon', coordinates: [box(west, 180), box(-180, east)] };
}
