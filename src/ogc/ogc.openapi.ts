/**
 * The OpenAPI description of the OGC API – Features routes (`/ogc`): their documents' schemas and
 * examples, and the API definition `GET /ogc/api` serves (this service's document, restricted to them).
 */
import type { OpenAPIObject, SchemaObject } from '@nestjs/swagger';
import { EXAMPLE_IDS } from '../common/openapi/example-ids.js';
import { component, geoPoint, UUID } from '../common/openapi/schemas.js';
import { TWIN_LIST_ATTRIBUTE_SCHEMAS, TWIN_LIST_SAMPLE } from '../twins/twin.openapi.js';
import { MAX_LIMIT } from './ogc-query.js';
import { TWIN_QUERYABLES } from './ogc-queryables.js';
import { collections, conformance, GEO_JSON, landingPage, queryables, type TwinsExtent } from './ogc.resource.js';
import { FEATURE_PROPERTIES } from './ogc-queryables.js';

const BASE = 'https://api.example.com/ogc';
const EXTENT: TwinsExtent = { bbox: [2.2241, 48.8156, 2.4699, 48.9021], interval: ['2026-01-04T08:12:44.041236Z', '2026-11-21T19:26:03.123456Z'] };

const LINK = component('OgcLink', {
  type: 'object',
  required: ['href', 'rel', 'type'],
  properties: { href: { type: 'string', format: 'uri' }, rel: { type: 'string' }, type: { type: 'string' }, title: { type: 'string' } },
  additionalProperties: false,
});
const LINKS: SchemaObject = { type: 'array', items: LINK };

export const LANDING_PAGE = {
  schema: component('OgcLandingPage', {
    type: 'object',
    description: 'The landing page: links to the API definition (`service-desc`), the documentation, the conformance classes and the collections.',
    required: ['title', 'description', 'links'],
    properties: { title: { type: 'string' }, description: { type: 'string' }, links: LINKS },
    additionalProperties: false,
  }),
  example: landingPage(BASE, 'https://api.example.com/docs'),
};

export const CONFORMANCE = {
  schema: component('OgcConformance', {
    type: 'object',
    description: 'The conformance classes implemented (OGC API – Features Parts 1 and 3, CQL2).',
    required: ['conformsTo'],
    properties: { conformsTo: { type: 'array', items: { type: 'string', format: 'uri' } } },
    additionalProperties: false,
  }),
  example: conformance(),
};

const COLLECTION = component('OgcCollection', {
  type: 'object',
  description:
    'The `twins` collection: its extent is that of the twins with a location the caller sees (the whole world when there are none), read at most once a minute (it scans them).',
  required: ['id', 'title', 'description', 'itemType', 'crs', 'storageCrs', 'extent', 'links'],
  properties: {
    id: { type: 'string', enum: ['twins'] },
    title: { type: 'string' },
    description: { type: 'string' },
    itemType: { type: 'string', enum: ['feature'] },
    crs: { type: 'array', items: { type: 'string', format: 'uri' } },
    storageCrs: { type: 'string', format: 'uri' },
    extent: {
      type: 'object',
      required: ['spatial', 'temporal'],
      properties: {
        spatial: {
          type: 'object',
          required: ['bbox', 'crs'],
          properties: { bbox: { type: 'array', minItems: 1, maxItems: 1, items: { type: 'array', minItems: 4, maxItems: 4, items: { type: 'number' } } }, crs: { type: 'string' } },
          additionalProperties: false,
        },
        temporal: {
          type: 'object',
          required: ['interval', 'trs'],
          description: 'The interval of the twins\' `modified` (null ends when there are none).',
          properties: {
            interval: { type: 'array', minItems: 1, maxItems: 1, items: { type: 'array', minItems: 2, maxItems: 2, items: { type: 'string', nullable: true } } },
            trs: { type: 'string' },
          },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    links: LINKS,
  },
  additionalProperties: false,
});

export const COLLECTIONS = {
  schema: component('OgcCollections', {
    type: 'object',
    required: ['links', 'collections'],
    properties: { links: LINKS, collections: { type: 'array', items: COLLECTION } },
    additionalProperties: false,
  }),
  example: collections(BASE, EXTENT),
};

export const ONE_COLLECTION = { schema: COLLECTION, example: collections(BASE, EXTENT).collections[0] };

export const QUERYABLES = {
  schema: component('OgcQueryables', {
    type: 'object',
    description: 'A JSON Schema (2019-09) of the queryables: the names a filter may use, with their types.',
    required: ['$schema', '$id', 'type', 'properties'],
    properties: {
      $schema: { type: 'string' },
      $id: { type: 'string', format: 'uri' },
      type: { type: 'string', enum: ['object'] },
      title: { type: 'string' },
      description: { type: 'string' },
      properties: { type: 'object', additionalProperties: { type: 'object', additionalProperties: true } },
      additionalProperties: { type: 'boolean' },
    },
    additionalProperties: false,
  }),
  example: queryables(BASE),
};

/** The properties of a feature: the list form's attributes (their schemas) and `organization`. */
const PROPERTIES: Record<string, SchemaObject> = Object.fromEntries(
  FEATURE_PROPERTIES.map((name) => [name, name === 'organization' ? { ...UUID, description: 'The organization the twin belongs to.' } : (TWIN_LIST_ATTRIBUTE_SCHEMAS[name] as SchemaObject)]),
);

const FEATURE = component('OgcTwinFeature', {
  type: 'object',
  description: 'A twin as a GeoJSON Feature: its location, and as properties the list form\'s attributes (`GET /twins/`) with `organization` (those `properties` names, when given).',
  required: ['type', 'id', 'geometry', 'properties'],
  properties: {
    type: { type: 'string', enum: ['Feature'] },
    id: UUID,
    geometry: geoPoint(),
    properties: { type: 'object', properties: PROPERTIES, additionalProperties: false },
  },
  additionalProperties: false,
});

const { location, ...sampleAttributes } = TWIN_LIST_SAMPLE.attributes;
const FEATURE_EXAMPLE = {
  type: 'Feature',
  id: EXAMPLE_IDS.twins,
  geometry: location,
  properties: { ...sampleAttributes, organization: EXAMPLE_IDS.organizations },
};

export const ONE_FEATURE = { schema: FEATURE, example: FEATURE_EXAMPLE };

export const FEATURE_COLLECTION = {
  schema: component('OgcFeatureCollection', {
    type: 'object',
    description: `A page of twins: \`links\` has \`self\`, \`next\` while more follow and \`prev\` on a page read from a position (their cursors are opaque); \`numberReturned\` counts the features (at most \`limit\`, ${MAX_LIMIT} at most); \`timeStamp\` is when the page was read. There is no \`numberMatched\` (no count is made: deep pages cost what the first does).`,
    required: ['type', 'features', 'numberReturned', 'timeStamp', 'links'],
    properties: {
      type: { type: 'string', enum: ['FeatureCollection'] },
      features: { type: 'array', items: FEATURE },
      numberReturned: { type: 'integer', minimum: 0 },
      timeStamp: { type: 'string', format: 'date-time' },
      links: LINKS,
    },
    additionalProperties: false,
  }),
  example: {
    type: 'FeatureCollection',
    features: [FEATURE_EXAMPLE],
    numberReturned: 1,
    timeStamp: '2026-11-21T19:26:03.123000Z',
    links: [
      { href: `${BASE}/collections/twins/items?bbox=2.2,48.8,2.5,48.9&limit=1`, rel: 'self', type: GEO_JSON },
      { href: `${BASE}/collections/twins/items?bbox=2.2,48.8,2.5,48.9&limit=1&page_after=WyJvZ2MtdHdpbnM6aWQiLFsiMGY4ZmFkNWIiXV0.q1w2e3r4t5y6u7i8o9p0aa`, rel: 'next', type: GEO_JSON },
    ],
  },
};

export const API_DEFINITION = {
  schema: {
    type: 'object',
    description: 'An OpenAPI 3.0 document.',
    required: ['openapi', 'info', 'paths'],
    properties: { openapi: { type: 'string', pattern: '^3\\.0\\.' }, info: { type: 'object', additionalProperties: true }, paths: { type: 'object', additionalProperties: true } },
    additionalProperties: true,
  } satisfies SchemaObject,
};

export const QUERYABLE_NAMES = Object.keys(TWIN_QUERYABLES).join(', ');

export const ITEMS_DESCRIPTION = `
The twins with a location that the caller sees (the visibility rule of \`GET /twins/\`), as an \`application/geo+json\`
FeatureCollection at the top level, in \`id\` order, \`limit\` a page (default 100; more than ${MAX_LIMIT} is read as ${MAX_LIMIT}).
Pages are keyset pages: follow the \`next\` / \`prev\` links (a deep page costs what the first does).

**Narrowing** (all combinable): \`bbox\` (CRS84; the twins in or on the box), \`datetime\` (on \`modified\`), the list filters of
\`GET /twins/\` (\`is_public\`, \`is_supplier\`, \`is_personal\`, \`organization\`, \`characteristics\`, \`is_connection\`), and \`filter\`.

**filter** (OGC API – Features Part 3): CQL2 over the queryables (${QUERYABLE_NAMES}), as \`filter-lang=cql2-text\` (the default),
\`cql2-json\`, or \`cql-text\` (what GDAL 3.6 sends; the same grammar). Comparisons (=, <>, <, >, <=, >=), \`LIKE\` (\`%\`, \`_\`, \`\\\\\` escapes),
\`BETWEEN\` (numbers, strings, timestamps), \`IN\`, \`IS NULL\`, \`AND\`/\`OR\`/\`NOT\`, \`CASEI\`, \`TIMESTAMP('…')\` and \`DATE('…')\` for
\`created\` and \`modified\`, and the spatial functions \`S_INTERSECTS\`, \`S_WITHIN\`, \`S_CONTAINS\`, \`S_EQUALS\`, \`S_TOUCHES\`,
\`S_OVERLAPS\`, \`S_CROSSES\`, \`S_DISJOINT\` over \`geometry\` and WKT (\`POINT(2.35 48.85)\`, \`POLYGON((…))\`, …, \`BBOX(w,s,e,n)\`) or
GeoJSON literals; and the extension \`S_DWITHIN(geometry, <geometry>, <metres>)\`, within a distance measured on the sphere.
Literals are bound as parameters; the spatial functions use the spatial index. An unknown queryable, a type mismatch, a
syntax error (with its position) is a 400 naming \`filter\`. A property named like a keyword is quoted: \`"name"\`.
`;

/**
 * The API definition of the OGC API (`GET /ogc/api`, the landing page's `service-desc`): this service's
 * OpenAPI document restricted to the `/ogc` routes, their paths relative to the server `base` (the
 * landing page), as OGC API clients (GDAL's OAPIF driver among them) look up `/collections/{id}/items`.
 */
export function ogcApiDefinition(document: OpenAPIObject, base: string): OpenAPIObject {
  const paths = Object.fromEntries(
    Object.entries(document.paths)
      .filter(([path]) => path === '/ogc' || path.startsWith('/ogc/'))
      .map(([path, item]) => [path === '/ogc' ? '/' : path.slice('/ogc'.length), item]),
  );
  return {
    ...document,
    info: { ...document.info, title: 'Digital twins: OGC API – Features', description: 'The twins the caller sees, as OGC API – Features with CQL2 filters.' },
    servers: [{ url: base, description: 'The landing page' }],
    tags: (document.tags ?? []).filter((tag) => tag.name === 'ogc'),
    paths,
  };
}

