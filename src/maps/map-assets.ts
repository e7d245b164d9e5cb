import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { feature } from 'topojson-client';
import { bodyEtag } from '../common/http/conditional.js';

/** One file the map page loads: its bytes, type, validator and version, made once. */
export interface MapAsset {
  body: Buffer;
  contentType: string;
  etag: string;
  /** What `?v=` must say for the URL to name exactly these bytes (and be cached for good). */
  version: string;
}

const maplibre = (file: string) => join(dirname(require.resolve('maplibre-gl/package.json')), 'dist', file);
/** The page's own files: beside this module in src/, copied beside the compiled one (nest-cli.json assets). */
const page = (file: string) => join(__dirname, 'map-page', file);

type Ring = [number, number][];

/**
 * A ring as a plane map draws it. world-atlas's rings are on the sphere: Russia's and Fiji's jump
 * from 180° to -180° and back, which a plane map draws as an edge across the whole world (everything
 * north of the Bering Strait was land); Antarctica's goes once around the pole. Unwrapped, each step
 * is under 180° (MapLibre folds longitudes past ±180° back onto the world), and a ring that went
 * around a pole is closed through it.
 */
function planarRing(ring: Ring): Ring {
  const out: Ring = [];
  let shift = 0;
  for (const [lon, lat] of ring) {
    const previous = out.at(-1);
    if (previous) shift += Math.round((previous[0] - (lon + shift)) / 360) * 360;
    out.push([lon + shift, lat]);
  }
  const [first, last] = [out[0], out.at(-1)!];
  if (Math.abs(last[0] - first[0]) > 180) {
    const pole = last[1] < 0 ? -90 : 90;
    out.push([last[0], pole], [first[0], pole], first);
  }
  return out;
}

/**
 * Country outlines, the basemap: world-atlas's TopoJSON at 1:110m as one GeoJSON FeatureCollection,
 * coordinates rounded to 0.01° (about 1 km, far below what 1:110m resolves): 170 KB instead of 440.
 * 1:50m would draw coasts better at a city's zooms, but MapLibre slices GeoJSON into tiles in its
 * worker, ahead of the twins' tiles: in the browser test, 1:50m's ten times the vertices held every new
 * view's tiles back by seconds.
 */
function countries(): Buffer {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a TopoJSON topology, as the package ships it
  const topology = JSON.parse(readFileSync(require.resolve('world-atlas/countries-110m.json'), 'utf8')) as any;
  const collection = feature(topology, topology.objects.countries) as unknown as GeoJSON.FeatureCollection<GeoJSON.Polygon | GeoJSON.MultiPolygon>;
  for (const { geometry } of collection.features) {
    if (geometry.type === 'Polygon') geometry.coordinates = geometry.coordinates.map((ring) => planarRing(ring as Ring));
    else geometry.coordinates = geometry.coordinates.map((polygon) => polygon.map((ring) => planarRing(ring as Ring)));
  }
  const round = (_key: string, value: unknown) => (typeof value === 'number' ? Math.round(value * 100) / 100 : value);
  return Buffer.from(JSON.stringify(collection, round));
}

/**
 * The files of `GET /map`, by the name the page asks for them under `/map/assets/`: nothing comes from
 * another origin. Compression is the service's (common/http/compression.ts): these go as they are here.
 */
const SOURCES: Record<string, { contentType: string; read: () => Buffer }> = {
  // Its import of MapLibre names the versioned URL: the script's own version changes with MapLibre's.
  'map.js': { contentType: 'text/javascript; charset=utf-8', read: () => Buffer.from(versioned(readFileSync(page('map.js'), 'utf8'), 'map.js')) },
  'map.css': { contentType: 'text/css; charset=utf-8', read: () => readFileSync(page('map.css')) },
  'maplibre-gl.mjs': { contentType: 'text/javascript; charset=utf-8', read: () => readFileSync(maplibre('maplibre-gl.mjs')) },
  'maplibre-gl-worker.mjs': { contentType: 'text/javascript; charset=utf-8', read: () => readFileSync(maplibre('maplibre-gl-worker.mjs')) },
  'maplibre-gl.css': { contentType: 'text/css; charset=utf-8', read: () => readFileSync(maplibre('maplibre-gl.css')) },
  'countries.geojson': { contentType: 'application/geo+json', read: countries },
};

/** The names `/map/assets/<name>` answers. */
export const MAP_ASSET_NAMES = Object.keys(SOURCES);

/**
 * The media types of the page's files, without reading them: the OpenAPI description asks when the
 * controller is declared, and the files (MapLibre's 1.6 MB among them) are read on their first request.
 */
export const MAP_ASSET_MEDIA_TYPES = [...new Set(Object.values(SOURCES).map(({ contentType }) => contentType.split(';')[0]))];

const cache = new Map<string, MapAsset>();

function made(body: Buffer, contentType: string): MapAsset {
  const etag = bodyEtag(body);
  // The tag's hash, shortened: 72 bits tell versions of a file apart.
  return { body, contentType, etag, version: etag.slice(2, 14) };
}

/** A file of the page, or undefined for any other name. */
export function mapAsset(name: string): MapAsset | undefined {
  if (!Object.hasOwn(SOURCES, name)) return undefined;
  let asset = cache.get(name);
  if (!asset) {
    asset = made(SOURCES[name].read(), SOURCES[name].contentType);
    cache.set(name, asset);
  }
  return asset;
}

/**
 * `text` (index.html, map.js) with every `/map/assets/<name>` it names versioned (`?v=<version>`), so
 * the browser keeps those files for good and a new build's page names new URLs.
 */
function versioned(text: string, file: string): string {
  return text.replace(/\/map\/assets\/([\w.-]+)/g, (url: string, name: string) => {
    const named = mapAsset(name);
    if (!named) throw new Error(`map page: ${file} names ${url}, which is not one of its files`);
    return `${url}?v=${named.version}`;
  });
}

/** The page, its files' URLs versioned: only the page itself is revalidated on every visit. */
export function mapPage(): MapAsset {
  let asset = cache.get('');
  if (!asset) {
    const html = versioned(readFileSync(page('index.html'), 'utf8'), 'index.html');
    asset = made(Buffer.from(html), 'text/html; charset=utf-8');
    cache.set('', asset);
  }
  return asset;
}
