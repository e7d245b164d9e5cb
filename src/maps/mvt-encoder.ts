import { fromGeojsonVt } from 'vt-pbf';

/** A tile's feature as PostgreSQL hands it over in JSON: its point (tile units, GeoJSON) and its properties. */
export type FeatureRow = { geom: { coordinates: [number, number] } } & Record<string, string | number | boolean | null>;

/**
 * Encodes the `twins` layer in Node, for a PostGIS built without protobuf-c (the embedded database's:
 * "ST_AsMVT: Compiled without protobuf-c support"). Same rows, same order, same extent as ST_AsMVT:
 * clients decode the same features.
 */
export function encodeTwinsLayer(rows: FeatureRow[], extent: number): Buffer {
  // A null member is no tag, as ST_AsMVT leaves it out.
  const features = rows.map(({ geom, ...members }) => ({
    type: 1,
    geometry: [[Math.round(geom.coordinates[0]), Math.round(geom.coordinates[1])]],
    tags: Object.fromEntries(Object.entries(members).filter(([, value]) => value !== null)),
  }));
  // vt-pbf reads a geojson-vt tile's features and nothing else of it.
  return Buffer.from(fromGeojsonVt({ twins: { features } } as unknown as Parameters<typeof fromGeojsonVt>[0], { version: 2, extent }));
}
