import { twinListAttributePairsSql } from '../twins/twin.resource.js';
import { FEATURE_PROPERTIES, TWIN_QUERYABLES } from './ogc-queryables.js';

/**
 * The documents of the OGC API – Features service (`/ogc`): what each holds, whitelisted here. The
 * features themselves are JSON built by PostgreSQL (featureJsonSql); the rest are small objects made
 * from the base URL (`<PUBLIC_URL or the request's origin>/ogc`).
 */

export const GEO_JSON = 'application/geo+json';
export const JSON_MEDIA = 'application/json';
export const SCHEMA_JSON = 'application/schema+json';
/** The API definition's media type, as OGC API – Features Part 1 (OpenAPI 3.0 class) names it. */
export const OPENAPI_JSON = 'application/vnd.oai.openapi+json;version=3.0';
export const CRS84 = 'http://www.opengis.net/def/crs/OGC/1.3/CRS84';

/** The conformance classes this service implements, and no others. */
export const CONFORMANCE_CLASSES = [
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/features-filter',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables-query-parameters',
  'http://www.opengis.net/spec/cql2/1.0/conf/cql2-text',
  'http://www.opengis.net/spec/cql2/1.0/conf/cql2-json',
  'http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2',
  'http://www.opengis.net/spec/cql2/1.0/conf/advanced-comparison-operators',
  'http://www.opengis.net/spec/cql2/1.0/conf/case-insensitive-comparison',
  'http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions',
  'http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions-plus',
  'http://www.opengis.net/spec/cql2/1.0/conf/spatial-functions',
];

export const COLLECTION_ID = 'twins';

export interface Link {
  href: string;
  rel: string;
  type: string;
  title?: string;
}

const link = (href: string, rel: string, type: string, title?: string): Link => (title ? { href, rel, type, title } : { href, rel, type });

/** `GET /ogc`: what the service is and where its parts are. */
export function landingPage(base: string, docsUrl: string) {
  return {
    title: 'Digital twins',
    description: 'The twins the caller sees, as OGC API – Features (Part 1 Core, GeoJSON, OpenAPI 3.0; Part 3 Filtering with CQL2).',
    links: [
      link(base, 'self', JSON_MEDIA, 'This document'),
      link(`${base}/api`, 'service-desc', OPENAPI_JSON, 'The API definition (OpenAPI 3.0)'),
      link(docsUrl, 'service-doc', 'text/html', 'The service\'s documentation'),
      link(`${base}/conformance`, 'conformance', JSON_MEDIA, 'The conformance classes implemented'),
      link(`${base}/collections`, 'data', JSON_MEDIA, 'The collections'),
    ],
  };
}

export const conformance = () => ({ conformsTo: CONFORMANCE_CLASSES });

/** The extent of the visible located twins: their bounding box and the interval of their `modified`. */
export interface TwinsExtent {
  bbox: [number, number, number, number] | null;
  interval: [string | null, string | null];
}

/** The extent of both: the box around both boxes, the interval from the earlier start to the later end. */
export function unionExtent(a: TwinsExtent, b: TwinsExtent): TwinsExtent {
  const bbox: TwinsExtent['bbox'] =
    a.bbox && b.bbox ? [Math.min(a.bbox[0], b.bbox[0]), Math.min(a.bbox[1], b.bbox[1]), Math.max(a.bbox[2], b.bbox[2]), Math.max(a.bbox[3], b.bbox[3])] : (a.bbox ?? b.bbox);
  // Timestamps of one fixed form (microseconds, UTC) compare as text.
  const pick = (x: string | null, y: string | null, earlier: boolean) => (x === null ? y : y === null ? x : (x < y) === earlier ? x : y);
  return { bbox, interval: [pick(a.interval[0], b.interval[0], true), pick(a.interval[1], b.interval[1], false)] };
}

/** The `twins` collection (`GET /ogc/collections/twins`, and the one entry of `GET /ogc/collections`). */
export function twinsCollection(base: string, extent: TwinsExtent) {
  const self = `${base}/collections/${COLLECTION_ID}`;
  return {
    id: COLLECTION_ID,
    title: 'Twins',
    description: 'The twins with a location that the caller sees (public twins, supplier twins, and every twin of its organization).',
    itemType: 'feature',
    crs: [CRS84],
    storageCrs: CRS84,
    extent: {
      // An empty collection has no extent of its own: the whole world, as CRS84 allows.
      spatial: { bbox: [extent.bbox ?? [-180, -90, 180, 90]], crs: CRS84 },
      temporal: { interval: [extent.interval], trs: 'http://www.opengis.net/def/uom/ISO-8601/0/Gregorian' },
    },
    links: [
      link(self, 'self', JSON_MEDIA, 'This collection'),
      link(`${self}/items`, 'items', GEO_JSON, 'The twins as GeoJSON features'),
      link(`${self}/queryables`, 'http://www.opengis.net/def/rel/ogc/1.0/queryables', SCHEMA_JSON, 'What filters may name'),
      link(`${self}/queryables`, 'queryables', SCHEMA_JSON, 'What filters may name'),
    ],
  };
}

/** `GET /ogc/collections`. */
export function collections(base: string, extent: TwinsExtent) {
  return { links: [link(`${base}/collections`, 'self', JSON_MEDIA, 'The collections')], collections: [twinsCollection(base, extent)] };
}

/** `GET /ogc/collections/twins/queryables`: a JSON Schema of the queryables (Part 3). */
export function queryables(base: string) {
  return {
    $schema: 'https://json-schema.org/draft/2019-09/schema',
    $id: `${base}/collections/${COLLECTION_ID}/queryables`,
    type: 'object',
    title: 'Twins',
    description: 'What a CQL2 filter of the twins collection may name.',
    properties: Object.fromEntries(Object.entries(TWIN_QUERYABLES).map(([name, queryable]) => [name, { title: name, ...queryable.schema }])),
    additionalProperties: false,
  };
}

/**
 * A twin as a GeoJSON Feature, JSON of the twins row aliased `t`: its id, its location, and as
 * `properties` the list form's attributes (those `keep` names, all when undefined) with `organization`.
 */
export function featureJsonSql(t: string, keep?: readonly string[]): string {
  const shown = keep ?? FEATURE_PROPERTIES;
  const pairs = twinListAttributePairsSql(t, new Set([...shown].filter((name) => name !== 'organization')));
  if (shown.includes('organization')) pairs.push(`'organization', ${t}.organization_id`);
  return `json_build_object('type', 'Feature', 'id', ${t}.id, 'geometry', ST_AsGeoJSON(${t}.location)::json, 'properties', ${pairs.length > 0 ? `json_build_object(${pairs.join(', ')})` : `'{}'::json`})`;
}
