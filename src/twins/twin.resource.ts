import type { ResourceObject } from '../common/json-api/resource.js';
import { jsonObject, ResourceForm, timestamp, toOne, type Member } from '../common/json-api/resource-sql.js';
import { fieldsetKey, SqlTexts } from '../database/sql-texts.js';
import type { Row, twins } from '../database/schema/index.js';

/** A twin as the repository reads it (`location` as GeoJSON): the input of every twin form below. */
export type TwinRow = Row<typeof twins>;

/** `weekday_text` of a Google-Places style opening hours object; [] when absent or malformed. */
export function weekdayText(openingHours: Record<string, unknown> | null | undefined): string[] {
  const lines = openingHours?.weekday_text;
  return Array.isArray(lines) ? lines.filter((line): line is string => typeof line === 'string') : [];
}

/** Members more than one form shows (each form names them as it spells them). */
const created = timestamp('created');
const modified = timestamp('modified');
/** The row reads `location` as GeoJSON already (the repository's select list). */
const location: Member<TwinRow> = { sql: (t) => `ST_AsGeoJSON(${t}.location)::json`, value: (row) => row.location };
const placeId: Member<TwinRow> = { sql: (t) => `coalesce(${t}.place_id, '')`, value: (row) => row.place_id ?? '' };
const relationships = { organization: toOne('organizations', 'organization_id') };

/** The attributes of the own-twins form (`GET /my/twins/`); the list form starts with the same ones. */
const OWN_ATTRIBUTES = {
  created,
  modified,
  name: 'name',
  description: 'description',
  personal: 'personal',
  connections: 'connections',
  personality: jsonObject({ id: 'personality_id', characteristics: 'characteristics', services: 'services' }),
  'meta-data': 'meta_data',
} as const;

/**
 * The three wire forms of a twin (docs/API.md, section 9), each whitelisting its attributes: the list of
 * all twins (dasherized names), the list of own twins (a dasherized subset), and the detail (underscored
 * names, `opening_hours` as the `weekday_text` lines). Reads have PostgreSQL build them (`twinJsonSql` of
 * the twins row aliased `t`); write answers and the OpenAPI examples map a row.
 */
const TWIN_FORMS = {
  /** `GET /twins/` */
  list: new ResourceForm<TwinRow>({
    type: 'twins',
    attributes: {
      ...OWN_ATTRIBUTES,
      'place-id': placeId,
      provider: 'provider',
      location,
      'opening-hours': 'opening_hours',
      'phone-number': 'phone_number',
      address: 'address',
      city: 'city',
      state: 'state',
      website: 'website',
      'provider-info': 'provider_info',
    },
    relationships,
  }),
  /** `GET /my/twins/` */
  own: new ResourceForm<TwinRow>({ type: 'twins', attributes: OWN_ATTRIBUTES, relationships }),
  /** `GET /twins/<TWIN_ID>/`, and the answers of `POST /my/twins/` and `PATCH /my/twins/<TWIN_ID>/`. */
  detail: new ResourceForm<TwinRow>({
    type: 'twins',
    attributes: {
      created,
      modified,
      name: 'name',
      description: 'description',
      tasks_supplied: 'tasks_supplied',
      personal: 'personal',
      meta_data: 'meta_data',
      place_id: placeId,
      provider: 'provider',
      location,
      opening_hours: {
        // weekdayText: the string lines of `opening_hours.weekday_text`, in order; [] when absent or not an array.
        sql: (t) => `coalesce((SELECT json_agg(w.line ORDER BY w.n) FROM jsonb_array_elements(
      CASE WHEN jsonb_typeof(${t}.opening_hours -> 'weekday_text') = 'array' THEN ${t}.opening_hours -> 'weekday_text' END) WITH ORDINALITY AS w(line, n)
     WHERE jsonb_typeof(w.line) = 'string'), '[]'::json)`,
        value: (row) => weekdayText(row.opening_hours),
      },
      phone_number: 'phone_number',
      address: 'address',
      city: 'city',
      state: 'state',
      website: 'website',
      provider_info: 'provider_info',
      tags: 'tags',
    },
    relationships,
  }),
};

export type TwinForm = keyof typeof TWIN_FORMS;

export const twinListResource = (row: TwinRow): ResourceObject => TWIN_FORMS.list.resource(row);
export const ownTwinResource = (row: TwinRow): ResourceObject => TWIN_FORMS.own.resource(row);
export const twinDetailResource = (row: TwinRow): ResourceObject => TWIN_FORMS.detail.resource(row);

/** One JSON resource object of the twins row aliased `t` in `form`, with the members of `fieldset` (all when undefined). */
const twinJsonTexts = new SqlTexts();
export const twinJsonSql = (form: TwinForm, t: string, fieldset?: ReadonlySet<string>): string =>
  twinJsonTexts.get(`${form}|${t}|${fieldsetKey(fieldset)}`, () => TWIN_FORMS[form].sql(t, fieldset));

/**
 * `'name', <SQL>` of the list form's attributes that `keep` names (all when undefined), of the twins row
 * aliased `t`: the properties of a twin as an OGC API feature (src/ogc) are the list form's attributes.
 */
export const twinListAttributePairsSql = (t: string, keep?: ReadonlySet<string>): string[] => TWIN_FORMS.list.attributePairsSql(t, keep);

/** The member names of each form: what `fields[twins]` may name on the routes answering it. */
export const TWIN_FIELDS: Record<TwinForm, readonly string[]> = {
  list: TWIN_FORMS.list.names,
  own: TWIN_FORMS.own.names,
  detail: TWIN_FORMS.detail.names,
};
