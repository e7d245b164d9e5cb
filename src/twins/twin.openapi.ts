/** OpenAPI descriptions and examples of the twin routes (the wire forms of docs/API.md, sections 9 and 10). */

const TWIN_ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const ORG_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const BASE = 'https://api.example.com';
const relationships = { organization: { data: { type: 'organizations', id: ORG_ID } } };
const personality = { id: 'a3bb189e-8bf9-3888-9912-ace4e6543002', characteristics: ['outdoors', 'history'], services: ['guided tours'] };
const location = { type: 'Point', coordinates: [2.3522, 48.8566] };

const pageLinks = (query: string, pages = 3) => ({
  first: `${BASE}/twins/?${query}page_number=1`,
  last: `${BASE}/twins/?${query}page_number=${pages}`,
  next: `${BASE}/twins/?${query}page_number=2`,
  prev: null,
});
const pagination = { pagination: { page: 1, pages: 3, count: 142 } };

export const LIST_EXAMPLE = {
  links: pageLinks('is_supplier=true&'),
  data: [
    {
      type: 'twins',
      id: TWIN_ID,
      attributes: {
        created: '2026-11-21T19:26:03.123456Z',
        modified: '2026-11-21T19:26:03.123456Z',
        name: 'River walks',
        description: 'Guided city walks along the river.',
        personal: false,
        connections: [],
        personality,
        'meta-data': { category: 'tours' },
        'place-id': 'ChIJD7fiBh9u5kcRYJSMaMOCCwQ',
        provider: 'google',
        location,
        'opening-hours': { open_now: true, weekday_text: ['Monday: 9:00 AM – 5:00 PM'] },
        'phone-number': '+33 1 23 45 67 89',
        address: '1 Quai de la Tournelle',
        city: 'Paris',
        state: 'Île-de-France',
        website: 'https://example.com',
        'provider-info': { photos: [], reviews: [] },
      },
      relationships,
    },
  ],
  meta: pagination,
};

export const OWN_LIST_EXAMPLE = {
  links: { ...pageLinks(''), first: `${BASE}/my/twins/?page_number=1`, last: `${BASE}/my/twins/?page_number=1`, next: null },
  data: [
    {
      type: 'twins',
      id: TWIN_ID,
      attributes: {
        created: '2026-11-21T19:26:03.123456Z',
        modified: '2026-11-21T19:26:03.123456Z',
        name: 'River walks',
        description: 'Guided city walks along the river.',
        personal: false,
        connections: [],
        personality,
        'meta-data': {},
      },
      relationships,
    },
  ],
  meta: { pagination: { page: 1, pages: 1, count: 1 } },
};

export const GEO_LIST_EXAMPLE = {
  links: pageLinks('in_bbox=2.2,48.8,2.5,48.9&'),
  data: {
    results: {
      type: 'FeatureCollection',
      features: [
        {
          id: TWIN_ID,
          type: 'Feature',
          geometry: location,
          properties: { twin_id: TWIN_ID, name: 'River walks', description: 'Guided city walks along the river.' },
        },
      ],
    },
    meta: pagination,
    links: pageLinks('in_bbox=2.2,48.8,2.5,48.9&'),
  },
  meta: pagination,
};

export const DETAIL_EXAMPLE = {
  data: {
    type: 'twins',
    id: TWIN_ID,
    attributes: {
      created: '2026-11-21T19:26:03.123456Z',
      modified: '2026-11-21T19:26:03.123456Z',
      name: 'River walks',
      description: 'Guided city walks along the river.',
      tasks_supplied: 3,
      personal: false,
      meta_data: { category: 'tours', city: 'Paris' },
      place_id: 'ChIJD7fiBh9u5kcRYJSMaMOCCwQ',
      provider: 'google',
      location,
      opening_hours: ['Monday: 9:00 AM – 5:00 PM'],
      phone_number: '+33 1 23 45 67 89',
      address: '1 Quai de la Tournelle',
      city: 'Paris',
      state: 'Île-de-France',
      website: 'https://example.com',
      provider_info: { photos: [], reviews: [] },
      tags: ['family-friendly'],
    },
    relationships,
  },
};

export const CREATE_EXAMPLE = {
  data: {
    type: 'twins',
    attributes: {
      name: 'River walks',
      description: 'Guided city walks along the river.',
      public: true,
      location,
      personality: { characteristics: ['outdoors', 'history'], services: ['guided tours'] },
      tags: ['family-friendly'],
      'phone-number': '+33 1 23 45 67 89',
      city: 'Paris',
    },
  },
};

export const PATCH_EXAMPLE = { data: { type: 'twins', id: TWIN_ID, attributes: { description: 'Now also by night.', location: null } } };

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
