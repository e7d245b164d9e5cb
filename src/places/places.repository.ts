import { Sql } from '../database/sql.js';
import { sqlTypeOf, twins, type ColumnOf } from '../database/schema/index.js';
import { IMPORTED_COLUMNS, type PlaceTwinRow } from './place-mapping.js';

/**
 * SQL of the places import. A batch travels as ONE jsonb parameter (an array of row objects) that
 * `jsonb_to_recordset` turns into typed columns on the server: one round trip and one statement per
 * batch, no per-row parameters, and JSON arrays land directly in the text[] columns.
 */
export class PlacesRepository {
  constructor(private readonly sql: Sql) {}

  async organizationExists(organizationId: string): Promise<boolean> {
    const rows: unknown[] = await this.sql.query(`SELECT 1 FROM organizations WHERE id = $1`, [organizationId]);
    return rows.length > 0;
  }

  /**
   * Inserts the rows as public supplier twins of the organization, or refreshes the twin already
   * imported with the same place_id. Rows whose data did not change are left alone (no new row
   * version, `modified` kept). Place ids must be unique within `rows`.
   */
  async upsertPlaces(organizationId: string, rows: PlaceTwinRow[]): Promise<{ inserted: number; updated: number }> {
    return this.sql.transaction(async () => {
      // A crash can lose the last batches of the import, never corrupt them; re-running the import
      // restores them (it is idempotent). Worth it: no WAL flush wait per batch.
      await this.sql.query(`SET LOCAL synchronous_commit TO OFF`);
      const result: { inserted: boolean }[] = await this.sql.query(UPSERT, [organizationId, JSON.stringify(rows, withoutRepeatedMetaData)]);
      const inserted = result.filter((row) => row.inserted).length;
      return { inserted, updated: result.length - inserted };
    });
  }
}

/**
 * meta_data repeats provider_info and the opening-hours lines, the bulk of a place: they are sent
 * once, in their columns, and put back into meta_data by the SQL (a third less JSON to parse).
 */
function withoutRepeatedMetaData(key: string, value: unknown): unknown {
  if (key !== 'meta_data') return value;
  const { provider_info: _info, opening_hours: _hours, ...rest } = value as PlaceTwinRow['meta_data'];
  return rest;
}

/** What a re-import refreshes on a twin already imported with the same place_id. */
const REFRESHED = [
  'name', 'description', 'public', 'location', 'characteristics', 'services', 'meta_data', 'provider',
  'opening_hours', 'phone_number', 'address', 'city', 'state', 'website', 'provider_info', 'tags',
] as const satisfies readonly ColumnOf<typeof twins>[];

/** The record of one feature in the batch parameter: the imported columns typed as in the schema, and the point. */
const RECORD = [...IMPORTED_COLUMNS.map((column) => `${column} ${sqlTypeOf(twins, column)}`), 'lon float8', 'lat float8'].join(', ');

const UPSERT = `
  INSERT INTO twins AS t (
    organization_id, owner_account_id, personal, public, place_id, provider, name, description, location,
    characteristics, services, meta_data, opening_hours, phone_number, address, city, state, website,
    provider_info, tags
  )
  SELECT $1::uuid, NULL, false, true, r.place_id, r.provider, r.name, r.description,
         ST_SetSRID(ST_MakePoint(r.lon, r.lat), 4326),
         r.characteristics, r.services,
         r.meta_data || jsonb_build_object('provider_info', r.provider_info,
                                           'opening_hours', coalesce(r.opening_hours -> 'weekday_text', '[]'::jsonb)),
         r.opening_hours, r.phone_number, r.address, r.city,
         r.state, r.website, r.provider_info, r.tags
    FROM jsonb_to_recordset($2::jsonb) AS r(${RECORD})
  ON CONFLICT (organization_id, place_id) WHERE place_id IS NOT NULL DO UPDATE SET
    ${REFRESHED.map((column) => `${column} = EXCLUDED.${column}`).join(',\n    ')},
    modified = now()
  WHERE (${REFRESHED.map((column) => `t.${column}`).join(', ')})
        IS DISTINCT FROM (${REFRESHED.map((column) => `EXCLUDED.${column}`).join(', ')})
  RETURNING (t.xmax = 0) AS inserted`;
