import type { ResourceIdentifier, ResourceObject } from '../common/json-api/resource.js';
import { memberNames, resourceJsonSql, type ResourceSql } from '../common/json-api/resource-sql.js';
import { fieldsetKey, SqlTexts } from '../database/sql-texts.js';
import { isoTimestampSql } from '../database/timestamps.js';
import { events, type ColumnOf, type Row } from '../database/schema/index.js';

/** An event as the wire forms need it: the columns the repository reads. */
export const EVENT_COLUMNS = ['id', 'name', 'category', 'data', 'timestamp', 'occurred'] as const satisfies readonly ColumnOf<typeof events>[];
export type EventRow = Pick<Row<typeof events>, (typeof EVENT_COLUMNS)[number]>;

export const EVENT_TYPE = 'events';

export function eventResource(row: EventRow): ResourceObject {
  return {
    type: EVENT_TYPE,
    id: row.id,
    attributes: { name: row.name, category: row.category, data: row.data, timestamp: row.timestamp, occurred: row.occurred },
  };
}

export function eventIdentifier(id: string): ResourceIdentifier {
  return { type: EVENT_TYPE, id };
}

/** eventResource as SQL of the events row aliased `e` (timeline pages, NOTIFY payloads; resource-json.e2e-spec.ts proves them equal). */
const eventSql = (e: string): ResourceSql => ({
  type: EVENT_TYPE,
  id: `${e}.id`,
  attributes: {
    name: `${e}.name`,
    category: `${e}.category`,
    data: `${e}.data`,
    timestamp: isoTimestampSql(`${e}."timestamp"`),
    occurred: isoTimestampSql(`${e}.occurred`),
  },
});

const eventJsonTexts = new SqlTexts();
export const eventJsonSql = (e: string, fieldset?: ReadonlySet<string>): string =>
  eventJsonTexts.get(`${e}|${fieldsetKey(fieldset)}`, () => resourceJsonSql(eventSql(e), fieldset));

/** What `fields[events]` may name. */
export const EVENT_FIELDS = memberNames(eventSql('e'));
