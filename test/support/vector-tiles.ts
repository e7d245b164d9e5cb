import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';

/** One feature of a decoded tile: its point in tile units (0..extent) and its properties. */
export interface TileFeature {
  x: number;
  y: number;
  properties: Record<string, string | number | boolean>;
}

/** The `twins` layer of a Mapbox Vector Tile (what any MVT client reads), or throws when it is missing. */
export function decodeTwinsLayer(bytes: Buffer): { extent: number; version: number; features: TileFeature[] } {
  const tile = new VectorTile(new PbfReader(bytes));
  const names = Object.keys(tile.layers);
  if (names.length !== 1 || names[0] !== 'twins') throw new Error(`expected one layer "twins", got ${names.join(', ')}`);
  const layer = tile.layers.twins;
  const features: TileFeature[] = [];
  for (let i = 0; i < layer.length; i++) {
    const feature = layer.feature(i);
    if (feature.type !== 1) throw new Error(`feature ${i} is not a point (type ${feature.type})`);
    const [[point]] = feature.loadGeometry();
    features.push({ x: point.x, y: point.y, properties: feature.properties as TileFeature['properties'] });
  }
  return { extent: layer.extent, version: layer.version, features };
}

/** The tile holding a location at zoom z, and the location's position in it (tile units), by the Web Mercator formulas. */
export function tileOf(lon: number, lat: number, z: number, extent = 4096) {
  const n = 2 ** z;
  const fx = (lon + 180) / 360;
  const fy = (1 - Math.log(Math.tan((lat * Math.PI) / 180) + 1 / Math.cos((lat * Math.PI) / 180)) / Math.PI) / 2;
  const x = Math.floor(fx * n);
  const y = Math.floor(fy * n);
  return { z, x, y, px: Math.round((fx * n - x) * extent), py: Math.round((fy * n - y) * extent) };
}
