import { invalidDocument, invalidParameter } from '../common/json-api/api-error.js';
import { params, type ParamReader } from '../common/json-api/query.js';
import { isPlainObject } from '../common/value-checks.js';
import { GEO_JSON_MEDIA_TYPE } from '../common/json-api/resource.js';
import type { GeoPoint } from '../database/schema/index.js';

/** Longitude/latitude in WGS 84 degrees. */
export interface LonLat {
  lon: number;
  lat: number;
}

/** `in_bbox=minLon,minLat,maxLon,maxLat`. */
export interface BoundingBox {
  minLon: number;
  minLat: number;
  maxLon: number;
  maxLat: number;
}


/**
 * A twin location in a request document: a GeoJSON Point (`{"type": "Point", "coordinates": [lon, lat]}`)
 * or null. Every problem is reported with the pointer of the offending member, e.g.
 * `/data/attributes/location/coordinates/1` for a latitude out of range.
 */
export function readLocation(value: unknown, pointer: string): GeoPoint | null {
  if (value === null) return null;
  if (!isPlainObject(value)) throw invalidDocument('location must be a GeoJSON Point object or null.', pointer);
  for (const key of Object.keys(value)) {
    if (key !== 'type' && key !== 'coordinates') {
      throw invalidDocument(`Unknown member "${key}" in location; a GeoJSON Point has only "type" and "coordinates".`, `${pointer}/${key}`);
    }
  }
  if (value.type !== 'Point') throw invalidDocument('location.type must be "Point".', `${pointer}/type`);
  const coordinates = value.coordinates;
  if (!Array.isArray(coordinates)) {
    throw invalidDocument('location.coordinates must be an array [longitude, latitude].', `${pointer}/coordinates`);
  }
  if (coordinates.length !== 2) {
    throw invalidDocument(
      `location.coordinates must hold exactly 2 numbers [longitude, latitude], got ${coordinates.length}.`,
      `${pointer}/coordinates`,
    );
  }
  const limits = [
    { name: 'longitude', max: 180 },
    { name: 'latitude', max: 90 },
  ];
  coordinates.forEach((coordinate, index) => {
    const { name, max } = limits[index];
    if (typeof coordinate !== 'number' || !Number.isFinite(coordinate)) {
      throw invalidDocument(`The ${name} must be a finite number.`, `${pointer}/coordinates/${index}`);
    }
    if (coordinate < -max || coordinate > max) {
      throw invalidDocument(`The ${name} must be between -${max} and ${max}, got ${coordinate}.`, `${pointer}/coordinates/${index}`);
    }
  });
  return { type: 'Point', coordinates: [coordinates[0] as number, coordinates[1] as number] };
}

function checkLonLat(lon: number, lat: number, name: string): void {
  if (lon < -180 || lon > 180) throw invalidParameter(name, `${name}: longitude must be between -180 and 180.`);
  if (lat < -90 || lat > 90) throw invalidParameter(name, `${name}: latitude must be between -90 and 90.`);
}

/** `in_bbox=minLon,minLat,maxLon,maxLat` in degrees; min ≤ max (a box across the antimeridian is two requests). */
export const readBoundingBox: ParamReader<BoundingBox> = (raw, name) => {
  const [minLon, minLat, maxLon, maxLat] = params.numbers(4)(raw, name);
  checkLonLat(minLon, minLat, name);
  checkLonLat(maxLon, maxLat, name);
  if (minLon > maxLon || minLat > maxLat) {
    throw invalidParameter(name, `${name} must be minLon,minLat,maxLon,maxLat with minLon ≤ maxLon and minLat ≤ maxLat.`);
  }
  return { minLon, minLat, maxLon, maxLat };
};

/** `point=lon,lat` in degrees. */
export const readLonLat: ParamReader<LonLat> = (raw, name) => {
  const [lon, lat] = params.numbers(2)(raw, name);
  checkLonLat(lon, lat, name);
  return { lon, lat };
};

/** Largest `dist`: half the Earth's circumference, i.e. everywhere. */
export const MAX_DISTANCE_METRES = 20_037_509;

/** `dist=<metres>`: a distance in metres, 0 to half the circumference of the Earth. */
export const readDistance: ParamReader<number> = params.number(0, MAX_DISTANCE_METRES);

/** True when the request asks for the geo listing (`Content-Type` or `Accept` naming application/geo+json). */
export function wantsGeoJson(headers: Record<string, string | string[] | undefined>): boolean {
  const contentType = headers['content-type'];
  if (typeof contentType === 'string' && contentType.split(';')[0].trim().toLowerCase() === GEO_JSON_MEDIA_TYPE) return true;
  const accept = headers.accept;
  if (typeof accept !== 'string') return false;
  return accept.split(',').some((range) => {
    const [type, ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    return type === GEO_JSON_MEDIA_TYPE && (q === undefined || Number(q.slice(2)) > 0);
  });
}
