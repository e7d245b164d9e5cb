import { TWIN_FIELDS } from '../twins/twin.resource.js';
import type { Queryable } from './cql2/cql2-sql.js';

/**
 * The queryables of the `twins` collection (OGC API – Features Part 3): what a CQL2 filter may name,
 * with its type and its SQL over the twins row. They are the twin list form's attribute names whose
 * values are scalars (a string, a boolean, a timestamp), `organization` (a property of every feature)
 * and `geometry` (the location). The list form's object and array attributes (`personality`,
 * `meta-data`, `opening-hours`, `provider-info`, `connections`) are properties but not queryables:
 * Basic CQL2 compares scalars only. Each value's SQL is what the property shows (`place-id` is '' for
 * a twin that is no imported place, as in the list form).
 */
interface TwinQueryable extends Queryable {
  /** Its JSON Schema in the queryables document. */
  schema: Record<string, unknown>;
}

const text = (column: string, description: string): TwinQueryable => ({ type: 'string', sql: (t) => `${t}.${column}`, schema: { type: 'string', description } });
const instant = (column: string, description: string): TwinQueryable => ({ type: 'timestamp', sql: (t) => `${t}.${column}`, schema: { type: 'string', format: 'date-time', description } });

export const TWIN_QUERYABLES: Readonly<Record<string, TwinQueryable>> = {
  geometry: {
    type: 'geometry',
    sql: (t) => `${t}.location`,
    schema: { format: 'geometry-point', 'x-ogc-role': 'primary-geometry', description: 'The twin\'s location (a Point, CRS84).' },
  },
  created: instant('created', 'When the twin was created.'),
  modified: instant('modified', 'When the twin last changed (what `datetime` filters on).'),
  name: text('name', 'Name.'),
  description: text('description', 'Description.'),
  personal: { type: 'boolean', sql: (t) => `${t}.personal`, schema: { type: 'boolean', description: 'A personal twin.' } },
  'place-id': { type: 'string', sql: (t) => `coalesce(${t}.place_id, '')`, schema: { type: 'string', description: 'The imported place\'s id; "" for other twins.' } },
  provider: text('provider', 'The provider of an imported place.'),
  'phone-number': text('phone_number', 'Phone number.'),
  address: text('address', 'Address.'),
  city: text('city', 'City.'),
  state: text('state', 'State or region.'),
  website: text('website', 'Website.'),
  organization: { type: 'uuid', sql: (t) => `${t}.organization_id`, schema: { type: 'string', format: 'uuid', description: 'The organization the twin belongs to.' } },
};

/** The properties of a feature: the list form's attributes but `location` (the geometry), and `organization`. */
export const FEATURE_PROPERTIES: readonly string[] = TWIN_FIELDS.list.filter((name) => name !== 'location');

// The queryables are properties of every feature (their names are the list form's): a check at load.
for (const name of Object.keys(TWIN_QUERYABLES)) {
  if (name !== 'geometry' && !FEATURE_PROPERTIES.includes(name)) throw new Error(`queryable ${name} is not a property of the twins' features`);
}
