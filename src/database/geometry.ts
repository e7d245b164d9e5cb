/** The GeoJSON geometry the service stores: a WGS 84 point, longitude first. */
export interface GeoPoint {
  type: 'Point';
  coordinates: [number, number];
}
