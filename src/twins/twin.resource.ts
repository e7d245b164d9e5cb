import type { ResourceObject } from '../common/json-api/resource.js';
import { memberNames, resourceJsonSql, type ResourceSql } from '../common/json-api/resource-sql.js';
import { fieldsetKey, SqlTexts } from '../database/sql-texts.js';
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
 * as SQL that has PostgreSQL build the same JSON (`twinJsonSql`, the reads: the text goes to the client
 * unparsed). test/e2e/twins-json.e2e-spec.ts proves the two equal for generated twins.
 */

const organization = (row: TwinRow) => ({ organization: { data: { type: 'organizations', id: row.organization_id } } });

const personality = (row: TwinRow) => ({ id: row.personality_id, characteristics: row.characteristics, services: row.services });

/** The attributes of the own-twins form (`GET /my/twins/`); the list form starts with the same ones. */
const ownAttributes = (row: TwinRow) => ({
  created: row.created,
  modified: row.modified,
  name: row.name,
  description: row.description,
  personal: row.personal,
  connections: row.connections,
  personality: personality(row),
  'meta-data': row.meta_data,
});

/** `GET /twins/` */
export function twinListResource(row: TwinRow): ResourceObject {
  return {
    type: 'twins',
    id: row.id,
    attributes: {
      ...ownAttributes(row),
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
  return { type: 'twins', id: row.id, attributes: ownAttributes(row), relationships: organization(row) };
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

const locationSql = (t: string) => `ST_AsGeoJSON(${t}.location)::json`;
/** weekdayText in SQL: the string lines of `opening_hours.weekday_text`, in order; [] when absent or not an array. */
const weekdayTextSql = (t: string) => `coalesce((SELECT json_agg(w.line ORDER BY w.n) FROM jsonb_array_elements(
      CASE WHEN jsonb_typeof(${t}.opening_hours -> 'weekday_text') = 'array' THEN ${t}.opening_hours -> 'weekday_text' END) WITH ORDINALITY AS w(line, n)
     WHERE jsonb_typeof(w.line) = 'string'), '[]'::json)`;

/** The attributes every form shares, of the twins row aliased `t`. */
const commonSql = (t: string) => ({
  created: isoTimestampSql(`${t}.created`),
  modified: isoTimestampSql(`${t}.modified`),
  name: `${t}.name`,
  description: `${t}.description`,
});
const personalitySql = (t: string) => `json_build_object('id', ${t}.personality_id, 'characteristics', ${t}.characteristics, 'services', ${t}.services)`;
const relationshipsSql = (t: string) => ({
  organization: `json_build_object('data', json_build_object('type', 'organizations', 'id', ${t}.organization_id))`,
});

/** The forms above as SQL of the twins row aliased `t`: their members, in wire order. */
const TWIN_FORMS = {
  list: (t: string): ResourceSql => ({
    type: 'twins',
    id: `${t}.id`,
    attributes: {
      ...commonSql(t), personal: `${t}.personal`, connections: `${t}.connections`, personality: personalitySql(t), 'meta-data': `${t}.meta_data`,
      'place-id': `coalesce(${t}.place_id, '')`, provider: `${t}.provider`, location: locationSql(t), 'opening-hours': `${t}.opening_hours`,
      'phone-number': `${t}.phone_number`, address: `${t}.address`, city: `${t}.city`, state: `${t}.state`, website: `${t}.website`,
      'provider-info': `${t}.provider_info`,
    },
    relationships: relationshipsSql(t),
  }),
  own: (t: string): ResourceSql => ({
    type: 'twins',
    id: `${t}.id`,
    attributes: { ...commonSql(t), personal: `${t}.personal`, connections: `${t}.connections`, personality: personalitySql(t), 'meta-data': `${t}.meta_data` },
    relationships: relationshipsSql(t),
  }),
  detail: (t: string): ResourceSql => ({
    type: 'twins',
    id: `${t}.id`,
    attributes: {
      ...commonSql(t), tasks_supplied: `${t}.tasks_supplied`, personal: `${t}.personal`, meta_data: `${t}.meta_data`, place_id: `coalesce(${t}.place_id, '')`,
      provider: `${t}.provider`, location: locationSql(t), opening_hours: weekdayTextSql(t), phone_number: `${t}.phone_number`,
      address: `${t}.address`, city: `${t}.city`, state: `${t}.state`, website: `${t}.website`, provider_info: `${t}.provider_info`, tags: `${t}.tags`,
    },
    relationships: relationshipsSql(t),
  }),
} as const;

export type TwinForm = keyof typeof TWIN_FORMS;

/** One JSON resource object of the twins row aliased `t` in `form`, with the members of `fieldset` (all when undefined). */
const twinJsonTexts = new SqlTexts();
export const twinJsonSql = (form: TwinForm, t: string, fieldset?: ReadonlySet<string>): string =>
  twinJsonTexts.get(`${form}|${t}|${fieldsetKey(fieldset)}`, () => resourceJsonSql(TWIN_FORMS[form](t), fieldset));

/** The member names of each form: what `fields[twins]` may name on the routes answering it. */
export const TWIN_FIELDS: Record<TwinForm, string[]> = {
  list: memberNames(TWIN_FORMS.list('t')),
  own: memberNames(TWIN_FORMS.own('t')),
  detail: memberNames(TWIN_FORMS.detail('t')),
};
