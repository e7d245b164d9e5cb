import type { ResourceObject } from '../common/json-api/resource.js';
import { isoTimestampSql } from '../database/timestamps.js';
import type { Row, twins } from '../database/schema/index.js';

/** A twin as the repository reads it (`location` as GeoJSON): the input of every twin form below. */
export type TwinRow = Row<typeof twins>;

/**
 * The three wire forms of a twin (docs/API.md, section 9). Each whitelists its attributes: the list of all
 * twins (dasherized names), the list of own twins (a dasherized subset), and the detail (underscored
 * names, `opening_hours` as the `weekday_text` lines).
 *
 * Each form is written twice, side by side: as a mapper of a row (write answers, OpenAPI examples) and
 * as SQL that has PostgreSQL build the same JSON (`TWIN_JSON`, the reads: the text goes to the client
 * unparsed). test/e2e/twins-json.e2e-spec.ts proves the two equal for generated twins.
 */

const organization = (row: TwinRow) => ({ organization: { data: { type: 'organizations', id: row.organization_id } } });

const personality = (row: TwinRow) => ({ id: row.personality_id, characteristics: row.characteristics, services: row.services });

/** `GET /twins/` */
export function twinListResource(row: TwinRow): ResourceObject {
  return {
    type: 'twins',
    id: row.id,
    attributes: {
      created: row.created,
      modified: row.modified,
      name: row.name,
      description: row.description,
      personal: row.personal,
      connections: row.connections,
      personality: personality(row),
      'meta-data': row.meta_data,
      'place-id': row.place_id ?? '',
      provider: row.provider,
      location: row.location,
      'opening-hours': row.opening_hours,
      'phone-number': row.phone_number,
      address: row.address,
      city: row.city,
      state: row.state,
      website: row.website,
      'provider-info': row.provider_info,
    },
    relationships: organization(row),
  };
}

/** `GET /my/twins/` */
export function ownTwinResource(row: TwinRow): ResourceObject {
  return {
    type: 'twins',
    id: row.id,
    attributes: {
      created: row.created,
      modified: row.modified,
      name: row.name,
      description: row.description,
      personal: row.personal,
      connections: row.connections,
      personality: personality(row),
      'meta-data': row.meta_data,
    },
    relationships: organization(row),
  };
}

/** `weekday_text` of a Google-Places style opening hours object; [] when absent or malformed. */
export function weekdayText(openingHours: Record<string, unknown> | null | undefined): string[] {
  const lines = openingHours?.weekday_text;
  return Array.isArray(lines) ? lines.filter((line): line is string => typeof line === 'string') : [];
}

/** `GET /twins/<TWIN_ID>/`, and the answers of `POST /my/twins/` and `PATCH /my/twins/<TWIN_ID>/`. */
export function twinDetailResource(row: TwinRow): ResourceObject {
  return {
    type: 'twins',
    id: row.id,
    attributes: {
      created: row.created,
      modified: row.modified,
      name: row.name,
      description: row.description,
      tasks_supplied: row.tasks_supplied,
      personal: row.personal,
      meta_data: row.meta_data,
      place_id: row.place_id ?? '',
      provider: row.provider,
      location: row.location,
      opening_hours: weekdayText(row.opening_hours),
      phone_number: row.phone_number,
      address: row.address,
      city: row.city,
      state: row.state,
      website: row.website,
      provider_info: row.provider_info,
      tags: row.tags,
    },
    relationships: organization(row),
  };
}

/** `json_build_object` pairs of the attributes every form shares, of the twins row aliased `t`. */
const commonSql = (t: string) => `'created', ${isoTimestampSql(`${t}.created`)}, 'modified', ${isoTimestampSql(`${t}.modified`)},
    'name', ${t}.name, 'description', ${t}.description`;
const personalitySql = (t: string) => `json_build_object('id', ${t}.personality_id, 'characteristics', ${t}.characteristics, 'services', ${t}.services)`;
const organizationSql = (t: string) =>
  `'relationships', json_build_object('organization', json_build_object('data', json_build_object('type', 'organizations', 'id', ${t}.organization_id)))`;
const locationSql = (t: string) => `ST_AsGeoJSON(${t}.location)::json`;
/** weekdayText in SQL: the string lines of `opening_hours.weekday_text`, in order; [] when absent or not an array. */
const weekdayTextSql = (t: string) => `coalesce((SELECT json_agg(w.line ORDER BY w.n) FROM jsonb_array_elements(
      CASE WHEN jsonb_typeof(${t}.opening_hours -> 'weekday_text') = 'array' THEN ${t}.opening_hours -> 'weekday_text' END) WITH ORDINALITY AS w(line, n)
     WHERE jsonb_typeof(w.line) = 'string'), '[]'::json)`;

/** The forms above as SQL expressions of the twins row aliased `t`: one JSON resource object each. */
export const TWIN_JSON = {
  list: (t: string) => `json_build_object('type', 'twins', 'id', ${t}.id, 'attributes', json_build_object(${commonSql(t)},
    'personal', ${t}.personal, 'connections', ${t}.connections, 'personality', ${personalitySql(t)}, 'meta-data', ${t}.meta_data,
    'place-id', coalesce(${t}.place_id, ''), 'provider', ${t}.provider, 'location', ${locationSql(t)}, 'opening-hours', ${t}.opening_hours,
    'phone-number', ${t}.phone_number, 'address', ${t}.address, 'city', ${t}.city, 'state', ${t}.state, 'website', ${t}.website,
    'provider-info', ${t}.provider_info), ${organizationSql(t)})`,
  own: (t: string) => `json_build_object('type', 'twins', 'id', ${t}.id, 'attributes', json_build_object(${commonSql(t)},
    'personal', ${t}.personal, 'connections', ${t}.connections, 'personality', ${personalitySql(t)}, 'meta-data', ${t}.meta_data), ${organizationSql(t)})`,
  detail: (t: string) => `json_build_object('type', 'twins', 'id', ${t}.id, 'attributes', json_build_object(${commonSql(t)},
    'tasks_supplied', ${t}.tasks_supplied, 'personal', ${t}.personal, 'meta_data', ${t}.meta_data, 'place_id', coalesce(${t}.place_id, ''),
    'provider', ${t}.provider, 'location', ${locationSql(t)}, 'opening_hours', ${weekdayTextSql(t)}, 'phone_number', ${t}.phone_number,
    'address', ${t}.address, 'city', ${t}.city, 'state', ${t}.state, 'website', ${t}.website, 'provider_info', ${t}.provider_info,
    'tags', ${t}.tags), ${organizationSql(t)})`,
} as const;

export type TwinForm = keyof typeof TWIN_JSON;
