import { invalidDocument } from '../common/json-api/api-error.js';

/** The most vertices a geofence may have, all rings together (each ring's closing position counted). */
export const MAX_GEOFENCE_VERTICES = 10_000;

/** A geofence's geometry as read from a request: its GeoJSON text, for PostGIS to parse and check. */
export interface GeofenceGeometry {
  geojson: string;
  vertices: number;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads a GeoJSON Polygon or MultiPolygon of WGS 84 coordinates: the form only (closed rings of at least
 * 4 positions, coordinates in range, at most MAX_GEOFENCE_VERTICES vertices). Validity (self-intersections,
 * holes outside their shell) is PostGIS's to say (`ST_IsValidReason`, in the service). Errors point at the
 * offending member under `pointer`.
 */
export function readGeofenceGeometry(value: unknown, pointer: string): GeofenceGeometry {
  if (!isPlainObject(value)) throw invalidDocument('geometry must be a GeoJSON Polygon or MultiPolygon object.', pointer);
  for (const key of Object.keys(value)) {
    if (key !== 'type' && key !== 'coordinates') throw invalidDocument(`Unknown member "${key}" in geometry; a geofence's geometry has only "type" and "coordinates".`, `${pointer}/${key}`);
  }
  if (value.type !== 'Polygon' && value.type !== 'MultiPolygon') throw invalidDocument('geometry.type must be "Polygon" or "MultiPolygon".', `${pointer}/type`);
  const coordinates = value.coordinates;
  const at = `${pointer}/coordinates`;
  let vertices = 0;
  const readRing = (ring: unknown, ringPointer: string) => {
    if (!Array.isArray(ring) || ring.length < 4) throw invalidDocument('A ring must be an array of at least 4 positions, the last the same as the first.', ringPointer);
    ring.forEach((position: unknown, index) => readPosition(position, `${ringPointer}/${index}`));
    const [first, last] = [ring[0] as number[], ring[ring.length - 1] as number[]];
    if (first[0] !== last[0] || first[1] !== last[1]) throw invalidDocument('A ring must be closed: its last position the same as its first.', ringPointer);
    vertices += ring.length;
    if (vertices > MAX_GEOFENCE_VERTICES) throw invalidDocument(`geometry has more than ${MAX_GEOFENCE_VERTICES} vertices.`, pointer);
  };
  const readPolygon = (polygon: unknown, polygonPointer: string) => {
    if (!Array.isArray(polygon) || polygon.length === 0) throw invalidDocument('A polygon must be an array of rings: its shell, then its holes.', polygonPointer);
    polygon.forEach((ring: unknown, index) => readRing(ring, `${polygonPointer}/${index}`));
  };
  if (value.type === 'Polygon') readPolygon(coordinates, at);
  else {
    if (!Array.isArray(coordinates) || coordinates.length === 0) throw invalidDocument('A MultiPolygon must be an array of polygons.', at);
    coordinates.forEach((polygon: unknown, index) => readPolygon(polygon, `${at}/${index}`));
  }
  return { geojson: JSON.stringify({ type: value.type, coordinates }), vertices };
}

const LIMITS = [
  { name: 'longitude', max: 180 },
  { name: 'latitude', max: 90 },
];

function readPosition(position: unknown, pointer: string): void {
  if (!Array.isArray(position) || position.length !== 2) throw invalidDocument('A position must be [longitude, latitude].', pointer);
  position.forEach((coordinate: unknown, index) => {
    const { name, max } = LIMITS[index];
    if (typeof coordinate !== 'number' || !Number.isFinite(coordinate)) throw invalidDocument(`The ${name} must be a finite number.`, `${pointer}/${index}`);
    if (coordinate < -max || coordinate > max) throw invalidDocument(`The ${name} must be between -${max} and ${max}, got ${coordinate}.`, `${pointer}/${index}`);
  });
}
