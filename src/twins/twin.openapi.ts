/**
 * The OpenAPI description of the twin routes: the three wire forms of a twin and the map listing
 * (docs/API.md, sections 9 and 10), the request documents and their examples. The forms are what the
 * resource mappers make of a sample row, so their attribute names come from twin.resource.ts itself.
 */
import { getSchemaPath, type SchemaObject } from '@nestjs/swagger';
import { EXAMPLE_IDS, OTHER_EXAMPLE_IDS } from '../common/openapi/example-ids.js';
import {
  component,
  examplePageLinks,
  FREE_FORM,
  geoPoint,
  PAGE_LINKS,
  pageDocument,
  PAGINATION_META,
  requestDocument,
  resourceForms,
  singleDocument,
  STRINGS,
  TIMESTAMP,
  toOne,
  UUID,
  type Schema,
} from '../common/openapi/schemas.js';
import { CreateTwinAttributes, UpdateTwinAttributes } from './dto/twin-attributes.dto.js';
import { ownTwinResource, twinDetailResource, twinListResource } from './twin.resource.js';
import type { TwinRow } from './twin.resource.js';

const TWIN_ID = EXAMPLE_IDS.twins;

/** A twin as the repository reads it: the source of every example below. */
const SAMPLE_ROW: TwinRow = {
  id: TWIN_ID,
  organization_id: EXAMPLE_IDS.organizations,
  owner_account_id: null,
  created: '2026-11-21T19:26:03.123456Z',
  modified: '2026-11-21T19:26:03.123456Z',
  name: 'River walks',
  description: 'Guided city walks along the river.',
  personal: false,
  public: true,
  location: { type: 'Point', coordinates: [2.3522, 48.8566] },
  location_occurred: '2026-11-21T19:26:03.123456Z',
  personality_id: OTHER_EXAMPLE_IDS.personality,
  characteristics: ['outdoors', 'history'],
  services: ['guided tours'],
  connections: [],
  meta_data: { category: 'tours' },
  place_id: 'ChIJD7fiBh9u5kcRYJSMaMOCCwQ',
  provider: 'google',
  opening_hours: { open_now: true, weekday_text: ['Monday: 9:00 AM – 5:00 PM'] },
  phone_number: '+33 1 23 45 67 89',
  address: '1 Quai de la Tournelle',
  city: 'Paris',
  state: 'Île-de-France',
  website: 'https://example.com',
  provider_info: { photos: [], reviews: [] },
  tags: ['family-friendly'],
  tasks_supplied: 3,
};

const text = (description: string): SchemaObject => ({ type: 'string', description });
const metaData: SchemaObject = { ...FREE_FORM, description: 'Free-form JSON object, returned as sent (member order aside).' };
const placeId = text('Id of an imported place; "" for other twins.');
const phoneNumber = text('"" when unknown.');
const providerInfo: SchemaObject = { ...FREE_FORM, description: 'What the place provider says (`{photos, reviews}` by default).' };

/** Every attribute of every form, by wire name (dasherized in lists, underscored in the detail). */
const ATTRIBUTES: Record<string, Schema> = {
  created: TIMESTAMP,
  modified: TIMESTAMP,
  name: { type: 'string', minLength: 1, maxLength: 255 },
  description: text('"" when none.'),
  personal: { type: 'boolean', description: 'A twin of a person.' },
  connections: { type: 'array', items: UUID, description: 'Ids of connected twins.' },
  personality: {
    type: 'object',
    required: ['id', 'characteristics', 'services'],
    properties: {
      id: UUID,
      characteristics: STRINGS,
      services: { ...STRINGS, description: 'A non-empty list makes the twin a supplier (visible to everyone).' },
    },
    additionalProperties: false,
  },
  'meta-data': metaData,
  meta_data: metaData,
  'place-id': placeId,
  place_id: placeId,
  provider: text('The place provider (`google`, …); "" for other twins.'),
  location: geoPoint({ nullable: true, description: 'GeoJSON Point, or null when the twin has no location.' }),
  'opening-hours': { ...FREE_FORM, description: 'The stored Google-Places style object (`{}` when none).' },
  opening_hours: { ...STRINGS, description: 'The `weekday_text` lines of the stored opening hours ([] when none).' },
  'phone-number': phoneNumber,
  phone_number: phoneNumber,
  address: text('"" when unknown.'),
  city: text('"" when unknown.'),
  state: text('"" when unknown.'),
  website: text('"" when unknown.'),
  'provider-info': providerInfo,
  provider_info: providerInfo,
  tags: STRINGS,
  tasks_supplied: { type: 'integer', minimum: 0, description: 'Quest tasks naming this twin as their place.' },
};

const FORMS = resourceForms({
  type: 'twins',
  attributes: ATTRIBUTES,
  relationships: { organization: toOne('organizations', false, 'The organization the twin belongs to.') },
  forms: {
    TwinListResource: { sample: twinListResource(SAMPLE_ROW), description: 'A twin in `GET /twins/` (list form: dasherized names).' },
    OwnTwinResource: { sample: ownTwinResource(SAMPLE_ROW), description: 'A twin in `GET /my/twins/` (own-twins form: a dasherized subset).' },
    TwinDetailResource: {
      sample: twinDetailResource(SAMPLE_ROW),
      description: 'A twin in `GET /twins/<TWIN_ID>/` and the answers of `POST /my/twins/` and `PATCH /my/twins/<TWIN_ID>/` (detail form: underscored names).',
    },
  },
});

export const TWIN_LIST = pageDocument('TwinListDocument', FORMS.TwinListResource, { path: '/twins/', items: [twinListResource(SAMPLE_ROW)] });
export const OWN_TWIN_LIST = pageDocument('OwnTwinListDocument', FORMS.OwnTwinResource, { path: '/my/twins/', items: [ownTwinResource(SAMPLE_ROW)] });
export const TWIN_DETAIL = singleDocument('TwinDetailDocument', FORMS.TwinDetailResource, twinDetailResource(SAMPLE_ROW));

const FEATURE = component('TwinFeature', {
  type: 'object',
  description: 'A twin with a location, as a GeoJSON Feature.',
  required: ['id', 'type', 'geometry', 'properties'],
  properties: {
    id: UUID,
    type: { type: 'string', enum: ['Feature'] },
    geometry: geoPoint(),
    properties: {
      type: 'object',
      required: ['twin_id', 'name', 'description'],
      properties: { twin_id: UUID, name: { type: 'string' }, description: { type: 'string' } },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
});

const geoLinks = examplePageLinks('/twins/', 3);
const geoMeta = { pagination: { page: 1, pages: 3, count: 2042 } };

/** `GET /twins/` as `application/geo+json`. */
export const TWIN_GEO_LISTING = {
  schema: component('TwinGeoListing', {
    type: 'object',
    description: 'The map listing: a page of the twins that have a location, as a GeoJSON FeatureCollection.',
    required: ['links', 'data', 'meta'],
    properties: {
      links: PAGE_LINKS,
      data: {
        type: 'object',
        required: ['results', 'meta', 'links'],
        properties: {
          results: {
            type: 'object',
            required: ['type', 'features'],
            properties: { type: { type: 'string', enum: ['FeatureCollection'] }, features: { type: 'array', items: FEATURE } },
            additionalProperties: false,
          },
          meta: PAGINATION_META,
          links: PAGE_LINKS,
        },
        additionalProperties: false,
        description: '`meta` and `links` repeat the top-level ones.',
      },
      meta: PAGINATION_META,
    },
    additionalProperties: false,
  }),
  example: {
    links: geoLinks,
    data: {
      results: {
        type: 'FeatureCollection',
        features: [
          {
            id: TWIN_ID,
            type: 'Feature',
            geometry: SAMPLE_ROW.location,
            properties: { twin_id: TWIN_ID, name: SAMPLE_ROW.name, description: SAMPLE_ROW.description },
          },
        ],
      },
      meta: geoMeta,
      links: geoLinks,
    },
    meta: geoMeta,
  },
};

export const TWIN_CREATE_REQUEST = {
  schema: requestDocument('TwinCreateDocument', {
    type: 'twins',
    description: '`{data: {type: "twins", id?, attributes}}` with dasherized attribute names; only `name` is required. `id`: a UUID the client chose, or none (the service makes one).',
    attributes: { $ref: getSchemaPath(CreateTwinAttributes) },
    attributesRequired: true,
    id: 'client',
    closes: ['PersonalityAttributes'],
  }),
  examples: {
    create: {
      summary: 'A public supplier twin with a location',
      value: {
        data: {
          type: 'twins',
          attributes: {
            name: 'River walks',
            description: 'Guided city walks along the river.',
            public: true,
            location: { type: 'Point', coordinates: [2.3522, 48.8566] },
            personality: { characteristics: ['outdoors', 'history'], services: ['guided tours'] },
            tags: ['family-friendly'],
            'meta-data': { category: 'tours' },
            'opening-hours': { weekday_text: ['Monday: 9:00 AM – 5:00 PM'] },
            'phone-number': '+33 1 23 45 67 89',
            city: 'Paris',
          },
        },
      },
    },
    minimal: { summary: 'Only the name', value: { data: { type: 'twins', attributes: { name: 'Ada' } } } },
  },
};

export const TWIN_UPDATE_REQUEST = {
  schema: requestDocument('TwinUpdateDocument', {
    type: 'twins',
    description: '`{data: {type: "twins", id?, attributes}}`: only the given attributes change; `id`, when given, must be the path id.',
    attributes: { $ref: getSchemaPath(UpdateTwinAttributes) },
    id: 'optional',
  }),
  examples: {
    patch: {
      summary: 'Change the description, remove the location',
      value: { data: { type: 'twins', id: TWIN_ID, attributes: { description: 'Now also by night.', location: null } } },
    },
  },
};

export const LIST_DESCRIPTION = `
All twins the caller can see: public twins, supplier twins (non-empty \`personality.services\`) and every
twin of the caller's organization. Attribute names are dasherized. Ordered by \`created\`, then \`id\`
(stable across pages) unless \`personality\` or \`ordering\` says otherwise.

**Filters** (all combinable; \`false\` selects the complement):
\`is_public\`, \`is_supplier\`, \`is_personal\` (created by the calling account), \`organization\`,
\`characteristics=a,b\` (the twin has all of them), \`personality=<TWIN_ID>\` (other twins sharing at least one
characteristic with that twin, most shared first; a twin the caller cannot see is a 400 naming \`personality\`),
\`is_connection\` (twins in the \`connections\` of the \`X-Twin\` twin; without \`X-Twin\` a 400 naming the header).
Spatial: \`in_bbox=minLon,minLat,maxLon,maxLat\` (degrees, min ≤ max), \`point=lon,lat\` with \`dist=<metres>\`
(great-circle distance on the WGS 84 spheroid), \`ordering=distance\` (nearest to \`point\` first, twins without a
location last; within a \`dist\` radius ties are broken by \`created, id\`, without one the nearest-neighbour index
scan leaves twins at exactly the same distance in no fixed order). \`point\` needs \`dist\` or \`ordering=distance\`; \`dist\` and \`ordering=distance\` need \`point\`.
Unknown parameters, repeated parameters and malformed values are 400s with \`source.parameter\`.

**Geo listing.** With \`Content-Type: application/geo+json\` or an \`Accept\` header listing \`application/geo+json\`
the answer is \`application/geo+json\`: \`{links, data: {results: FeatureCollection, meta, links}, meta}\`, where each
feature is \`{id, type: "Feature", geometry: Point [lon, lat], properties: {twin_id, name, description}}\`.
Same filters and order; only twins with a location, and the counts count only those. \`data.meta\` and
\`data.links\` repeat the top-level pagination \`meta\` and \`links\`. \`page_size\` defaults to 1000 (max 10000) there.
`;

/** A sample twin in the list form: the source of other features' examples of a twin (an OGC API feature, src/ogc). */
export const TWIN_LIST_SAMPLE = twinListResource(SAMPLE_ROW);

/** The schemas of the list form's attributes, by wire name (the properties of a twin as an OGC API feature). */
export const TWIN_LIST_ATTRIBUTE_SCHEMAS: Record<string, Schema> = Object.fromEntries(Object.keys(TWIN_LIST_SAMPLE.attributes).map((name) => [name, ATTRIBUTES[name]]));
