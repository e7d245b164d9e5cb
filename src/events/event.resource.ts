import type { ResourceObject } from '../common/json-api/resource.js';
import { ResourceForm, timestamp } from '../common/json-api/resource-sql.js';
import { fieldsetKey, SqlTexts } from '../database/sql-texts.js';
import { events, type ColumnOf, type Row } from '../database/schema/index.js';

/** An event as the wire forms need it: the columns the repository reads. */
export const EVENT_COLUMNS = ['id', 'name', 'category', 'data', 'timestamp', 'occurred'] as const satisfies readonly ColumnOf<typeof events>[];
export type EventRow = Pick<Row<typeof events>, (typeof EVENT_COLUMNS)[number]>;

export const EVENT_TYPE = 'events';

/** An event: timeline pages and NOTIFY payloads build it in SQL, write answers map the row. */
const EVENT = new ResourceForm<EventRow>({
  type: EVENT_TYPE,
  attributes: { name: 'name', category: 'category', data: 'data', timestamp: timestamp('timestamp', '"timestamp"'), occurred: timestamp('occurred') },
});

export const eventResource = (row: EventRow): ResourceObject => EVENT.resource(row);

const eventJsonTexts = new SqlTexts();
/** An event's resource object in SQL, of the events row aliased `e`. */
export const eventJsonSql = (e: string, fieldset?: ReadonlySet<string>): string => eventJsonTexts.get(`${e}|${fieldsetKey(fieldset)}`, () => EVENT.sql(e, fieldset));

/** What `fields[events]` may name. */
export const EVENT_FIELDS = EVENT.names;
