import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { feature } from 'topojson-client';

/** One file the map page loads: its bytes, type and validator, read once. */
export interface MapAsset {
  body: Buffer;
  contentType: string;
  etag: string;
}

const maplibre = (file: string) => join(dirname(require.resolve('maplibre-gl/package.json')), 'dist', file);
/** The page's own files: beside this module in src/, copied beside the compiled one (nest-cli.json assets). */
const page = (file: string) => join(__dirname, 'map-page', file);

/** Country outlines, the basemap: world-atlas's TopoJSON (1:110m) as one GeoJSON FeatureCollection. */
function countries(): Buffer {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a TopoJSON topology, as the package ships it
  const topology = JSON.parse(readFileSync(require.resolve('world-atlas/countries-110m.json'), 'utf8')) as any;
  return Buffer.from(JSON.stringify(feature(topology, topology.objects.countries)));
}

/**
 * The files of `GET /map`, by the name the page asks for them under `/map/assets/`: nothing comes from
 * another origin. MapLibre's module loads its worker from beside itself (`./maplibre-gl-worker.mjs`).
 */
const SOURCES: Record<string, { contentType: string; read: () => Buffer }> = {
  'index.html': { contentType: 'text/html; charset=utf-8', read: () => readFileSync(page('index.html')) },
  'map.js': { contentType: 'text/javascript; charset=utf-8', read: () => readFileSync(page('map.js')) },
  'map.css': { contentType: 'text/css; charset=utf-8', read: () => readFileSync(page('map.css')) },
  'maplibre-gl.mjs': { contentType: 'text/javascript; charset=utf-8', read: () => readFileSync(maplibre('maplibre-gl.mjs')) },
  'maplibre-gl-worker.mjs': { contentType: 'text/javascript; charset=utf-8', read: () => readFileSync(maplibre('maplibre-gl-worker.mjs')) },
  'maplibre-gl.css': { contentType: 'text/css; charset=utf-8', read: () => readFileSync(maplibre('maplibre-gl.css')) },
  'countries.geojson': { contentType: 'application/geo+json', read: countries },
};

/** The names `/map/assets/<name>` answers. */
export const MAP_ASSET_NAMES = Object.keys(SOURCES).filter((name) => name !== 'index.html');

const cache = new Map<string, MapAsset>();

/** A file of the page, or undefined for any other name. */
export function mapAsset(name: string): MapAsset | undefined {
  if (!Object.hasOwn(SOURCES, name)) return undefined;
  let asset = cache.get(name);
  if (!asset) {
    const source = SOURCES[name];
    const body = source.read();
    asset = { body, contentType: source.contentType, etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
    cache.set(name, asset);
  }
  return asset;
}
