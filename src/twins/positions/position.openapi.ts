/** The OpenAPI description of positions and tracks: the upload, its answer, and the track's GeoJSON. */
import type { ReferenceObject, SchemaObject } from '@nestjs/swagger';
import { EXAMPLE_BASE_URL, EXAMPLE_IDS } from '../../common/openapi/example-ids.js';
import { component, geoPoint, TIMESTAMP } from '../../common/openapi/schemas.js';
import { MAX_POSITIONS } from './position-body.js';
import { MAX_TRACK_PAGE_SIZE } from './track-query.js';

const measure = (description: string, range: Partial<SchemaObject> = {}): SchemaObject => ({ type: 'number', nullable: true, description, ...range });

const POSITION_MEASURES: Record<string, SchemaObject> = {
  accuracy: measure('Metres: the radius of the device\'s uncertainty.', { minimum: 0 }),
  speed: measure('Metres per second.', { minimum: 0 }),
  heading: measure('Degrees clockwise from true north, from 0 up to (not including) 360.', { minimum: 0, maximum: 360 }),
  altitude: measure('Metres above the WGS 84 ellipsoid.'),
};

const OCCURRED: SchemaObject = {
  type: 'string',
  format: 'date-time',
  description:
    "When the device was there, by its own clock: ISO 8601 with seconds and an offset, at most microseconds. Required. At most a day ahead of the service's clock, " +
    'and not older than POSITION_RETENTION_DAYS (90 by default; 0: any age).',
};

/** The attributes of a position as sent (and as a `twin.moved` change carries it). */
export const POSITION_ATTRIBUTES = component('PositionAttributes', {
  type: 'object',
  required: ['coordinates', 'occurred'],
  additionalProperties: false,
  properties: {
    coordinates: {
      type: 'array',
      description: '[longitude, latitude] in WGS 84 degrees (altitude has its own attribute).',
      minItems: 2,
      maxItems: 2,
      items: { type: 'number', minimum: -180, maximum: 180 },
    },
    occurred: OCCURRED,
    ...POSITION_MEASURES,
  },
});

const POSITION_RESOURCE = component('PositionResource', {
  type: 'object',
  required: ['type', 'attributes'],
  additionalProperties: false,
  description: 'A position of a twin. Positions have no id: the twin and `occurred` name one.',
  properties: { type: { type: 'string', enum: ['positions'] }, attributes: POSITION_ATTRIBUTES, meta: { type: 'object', additionalProperties: true } },
});

const WALK = [
  { coordinates: [2.3522, 48.8566], occurred: '2026-11-28T08:00:00Z', accuracy: 5, speed: 1.4, heading: 90 },
  { coordinates: [2.3531, 48.8567], occurred: '2026-11-28T08:00:05.250Z', accuracy: 4.5, speed: 1.5, heading: 88.5, altitude: 35.2 },
];

export const POSITIONS_UPLOAD = {
  schema: component('PositionUploadDocument', {
    type: 'object',
    required: ['data'],
    additionalProperties: false,
    properties: {
      data: { type: 'array', minItems: 1, maxItems: MAX_POSITIONS, items: POSITION_RESOURCE },
      meta: { type: 'object', additionalProperties: true },
    },
  }),
  examples: {
    walk: { summary: 'Two positions of a walk', value: { data: WALK.map((attributes) => ({ type: 'positions', attributes })) } },
    minimal: { summary: 'Where and when only', value: { data: [{ type: 'positions', attributes: { coordinates: [13.405, 52.52], occurred: '2026-11-28T09:15:00+01:00' } }] } },
  },
};

export const POSITIONS_RECEIVED = {
  schema: component('PositionUploadAnswer', {
    type: 'object',
    required: ['meta'],
    additionalProperties: false,
    properties: {
      meta: {
        type: 'object',
        required: ['received', 'new'],
        additionalProperties: false,
        properties: {
          received: { type: 'integer', minimum: 1, description: 'Positions in the upload.' },
          new: { type: 'integer', minimum: 0, description: 'Positions stored now; the others were stored before (same twin and `occurred`).' },
        },
      },
    },
  }),
  example: { meta: { received: 2, new: 2 } },
};

const LINK = component('GeoJsonLink', {
  type: 'object',
  required: ['href', 'rel'],
  properties: { href: { type: 'string', format: 'uri' }, rel: { type: 'string', description: '`self`, or `next` while more positions follow.' }, type: { type: 'string' } },
});

const collection = (name: string, feature: SchemaObject): ReferenceObject =>
  component(name, {
    type: 'object',
    required: ['type', 'features', 'links', 'numberReturned', 'timeStamp'],
    properties: {
      type: { type: 'string', enum: ['FeatureCollection'] },
      features: { type: 'array', items: feature },
      numberReturned: { type: 'integer', minimum: 0 },
      timeStamp: { ...TIMESTAMP, description: 'When the page was read.' },
      links: { type: 'array', items: LINK },
    },
  });

const POINT_FEATURE: SchemaObject = {
  type: 'object',
  required: ['type', 'geometry', 'properties'],
  properties: {
    type: { type: 'string', enum: ['Feature'] },
    geometry: geoPoint(),
    properties: { type: 'object', required: ['occurred', 'accuracy', 'speed', 'heading', 'altitude'], properties: { occurred: { ...TIMESTAMP }, ...POSITION_MEASURES } },
  },
};

const LINE_FEATURE: SchemaObject = {
  type: 'object',
  required: ['type', 'geometry', 'properties'],
  properties: {
    type: { type: 'string', enum: ['Feature'] },
    geometry: {
      type: 'object',
      required: ['type', 'coordinates'],
      description: 'A LineString of the page\'s positions (after `simplify`); a Point when the page holds one position.',
      properties: { type: { type: 'string', enum: ['LineString', 'Point'] }, coordinates: { type: 'array', items: {} } },
    },
    properties: {
      type: 'object',
      required: ['times', 'positions'],
      properties: {
        times: { type: 'array', items: { ...TIMESTAMP }, description: 'The `occurred` of each vertex, in order.' },
        positions: { type: 'integer', description: 'Positions the page held before `simplify` thinned them.' },
      },
    },
  },
};

const TRACK_URL = `${EXAMPLE_BASE_URL}/twins/${EXAMPLE_IDS.twins}/track`;
const links = (query: string, next?: string) => [
  { href: `${TRACK_URL}${query}`, rel: 'self', type: 'application/geo+json' },
  ...(next ? [{ href: `${TRACK_URL}${next}`, rel: 'next', type: 'application/geo+json' }] : []),
];

export const TRACK_POINTS = {
  schema: collection('TrackPoints', POINT_FEATURE),
  example: {
    type: 'FeatureCollection',
    features: [
      { type: 'Feature', geometry: { type: 'Point', coordinates: [2.3522, 48.8566] }, properties: { occurred: '2026-11-28T08:00:00.000000Z', accuracy: 5, speed: 1.4, heading: 90, altitude: null } },
      {
        type: 'Feature',
        geometry: { type: 'Point', coordinates: [2.3531, 48.8567] },
        properties: { occurred: '2026-11-28T08:00:05.250000Z', accuracy: 4.5, speed: 1.5, heading: 88.5, altitude: 35.2 },
      },
    ],
    numberReturned: 2,
    timeStamp: '2026-11-28T08:05:00.000000Z',
    links: links('?since=2026-11-28T08:00:00Z&page_size=2', '?since=2026-11-28T08:00:00Z&page_size=2&page_after=WyJ0cmFjayJd.c2lnbmF0dXJl'),
  },
};

export const TRACK_LINE = {
  schema: collection('TrackLine', LINE_FEATURE),
  example: {
    type: 'FeatureCollection',
    features: [
      {
        type: 'Feature',
        geometry: { type: 'LineString', coordinates: WALK.map((position) => position.coordinates) },
        properties: { times: ['2026-11-28T08:00:00.000000Z', '2026-11-28T08:00:05.250000Z'], positions: 2 },
      },
    ],
    numberReturned: 1,
    timeStamp: '2026-11-28T08:05:00.000000Z',
    links: links('?format=line&simplify=10'),
  },
};

export const TRACK_DESCRIPTION = [
  "The twin's positions in `occurred` order, as a GeoJSON FeatureCollection at the top of the body (`application/geo+json`; RFC 7946):",
  'a Point feature per position with `properties` `{occurred, accuracy, speed, heading, altitude}`, or with `format=line` one LineString',
  'feature of the page whose `properties.times` gives each vertex\'s `occurred`; `simplify=<metres>` thins that line (Douglas–Peucker, in',
  `metres on the ground), the kept vertices keeping their times. Pages hold \`page_size\` positions (1000 by default, at most ${MAX_TRACK_PAGE_SIZE});`,
  'while more follow, `links` has an entry with `rel: next` (OGC API – Features style; its `page_after` is an opaque cursor).',
  'Only twins of the caller\'s organization, even public ones: where a person or a vehicle was is not public (others: 404).',
].join(' ');

export const POSITIONS_DESCRIPTION = [
  `Up to ${MAX_POSITIONS} positions of a twin of the caller's organization, all or nothing: one invalid position is a 400 naming it`,
  '(`source.pointer` `/data/<n>/…`, every problem listed), and nothing is stored. A position already stored for the twin with the same',
  '`occurred` is a duplicate, not an error: a retried upload stores nothing twice (`meta.new` counts what was stored now). Positions may',
  "arrive late and out of order: the twin's `location` (the map, the lists, the tiles) becomes the newest position, and only when it is",
  "newer than the twin's; an older one goes into the track only. A move is a `twin.moved` change (one per upload, the newest position):",
  'on the twin\'s event stream and to webhooks subscribed to it.',
].join(' ');
