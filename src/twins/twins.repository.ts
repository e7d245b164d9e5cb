import { Injectable } from '@nestjs/common';
import { Sql } from '../database/sql.js';
import { SqlParams, unplannedValue } from '../database/sql-params.js';
import { fieldsetKey, SqlTexts } from '../database/sql-texts.js';
import { joinJsonParts, jsonArrayPartsSql, type JsonPart } from '../database/json-parts.js';
import type { Tenant } from '../common/auth/tenant.js';
import type { CountedJson, PageRequest } from '../common/json-api/pagination.js';
import type { CursorRequest } from '../common/json-api/cursor.js';
import type { Fieldsets, SortDirective } from '../common/json-api/representation.js';
import { KEYSET_ROWS, keysetOrder, keysetPageSql, type KeysetKey, type KeysetRows } from '../database/keyset.js';
import { rowShape, tableShape, type RowOf } from '../database/row-shape.js';
import { castOf, select, sqlTypeOf, twins, type ColumnOf, type GeoPoint } from '../database/schema/index.js';
import { IMPORTED_COLUMNS, type PlaceTwinRow } from './place-twin.js';
import { microsSql } from '../database/timestamps.js';
import { notifyChangeSql, recordChangesSql } from '../database/change-log.js';
import { crossingChangesJsonSql, geofenceCrossingsSql, PER_STEP } from '../geofences/geofence-crossings.js';
import { notifyTwinChangesSql, twinMovedChangeSql } from './positions/positions.repository.js';
import { organizationJsonSql } from '../organizations/organization.resource.js';
import type { TwinFilters } from './twin-filters.js';
import { twinJsonSql, type TwinForm, type TwinRow } from './twin.resource.js';
import { sharedTwinSql, visibleTwinSql } from './twin-visibility.js';
import { twinFilterConditions, type TwinFilterValues } from './twin-conditions.js';

export interface NewTwin {
  organizationId: string;
  ownerAccountId: string | null;
  name: string;
  description?: string;
  personal?: boolean;
}

/** The columns a twin's create and modify may set. */
const WRITABLE_COLUMNS = [
  'name', 'description', 'personal', 'public', 'location', 'characteristics', 'services', 'connections', 'tags',
  'meta_data', 'opening_hours', 'phone_number', 'address', 'city', 'state', 'website',
] as const satisfies readonly ColumnOf<typeof twins>[];

/** Writable columns of a twin (create and modify); keys are column names. */
export type TwinChanges = Partial<Pick<TwinRow, (typeof WRITABLE_COLUMNS)[number]>>;

const WRITABLE = new Set<string>(WRITABLE_COLUMNS);

/**
 * Filters after the service resolved what they refer to: `personality` becomes the reference twin's
 * characteristics, `is_connection` needs the acting twin.
 */
export interface TwinQuery extends Omit<TwinFilters, 'personality' | 'fields' | 'include' | 'sort'>, TwinFilterValues {
  personality?: { id: string; characteristics: string[] };
  /** Only the caller's organization (`/my/twins/`). */
  own?: boolean;
  /** The geo listing: only twins with a location. */
  located?: boolean;
  /** The order asked for (`sort`); without it, the list's own order (see orderKeys). */
  sort?: readonly SortDirective[];
}

/** How a page of twins is written: its form, the sparse fieldsets, whether each twin's organization is included. */
export interface TwinDocument {
  form: TwinForm;
  fields?: Fieldsets;
  includeOrganization?: boolean;
}

/**
 * A twin's version: what its detail document shows changes it (`modified`, which every change of its
 * columns sets, and `tasks_supplied`, which quest tasks change without touching `modified`).
 */
const versionSql = (t: string) => `${microsSql(`${t}.modified`)} || '.' || ${t}.tasks_supplied`;

const TWIN = tableShape(twins);
const ID = tableShape(twins, ['id']);
const VERSION = rowShape({ version: 'text' });
/** One twin's document as PostgreSQL wrote it (visibleJsonSql). */
const DOCUMENT = rowShape({ data: 'text', included: 'text?', version: 'text' });
/** A counted page's rows (countedPageSql): the count on each, the parts, `included` on a row of its own. */
const COUNTED_PARTS = rowShape({ count: 'bigint', part: 'text?', g: 'integer?', included: 'text?' });

/**
 * What a write of a twin answers: the detail form PostgreSQL built for the change log, and the version;
 * when the write set a location, its `twin.moved` change (position and resource) and its geofence
 * crossings (a JSON array of change rows, or null) as well.
 */
export type WrittenTwin = { id: string; document: string; version: string; moved_position: string | null; moved_resource: string | null; crossings: string | null };
const WRITTEN = rowShape({ id: 'uuid', document: 'text', version: 'text', moved_position: 'text?', moved_resource: 'text?', crossings: 'text?' });
const WRITTEN_NOTIFYING = rowShape({ id: 'uuid', document: 'text', version: 'text', moved_position: 'text?', moved_resource: 'text?', crossings: 'text?', notified: 'text?' });

/**
 * CTEs of a write to the twin rows of CTE `t` that set a location (with `location_occurred = now()`):
 * the position it is (`written_positions`, occurred now), its `twin.moved` change (`moves`), and its
 * geofence crossings from where it was: `before`, SQL over `t` (the location its locked row had, or
 * NULL for a new twin). The statement's answer reads `moves` and the crossings (movedSelect), and with a
 * bus channel announces them.
 */
const locationPositionSql = (before: string) => `written_positions AS (
         INSERT INTO positions (organization_id, twin_id, occurred, location)
         SELECT t.organization_id, t.id, t.location_occurred, t.location FROM t WHERE t.location IS NOT NULL
         ON CONFLICT (organization_id, twin_id, occurred) DO NOTHING
         RETURNING *
       ), moves AS (${twinMovedChangeSql('written_positions')}
       ), steps AS (
         SELECT t.organization_id, t.id AS twin_id, t.location_occurred AS occurred, t.location, ${before} AS before FROM t WHERE t.location IS NOT NULL
       ), ${geofenceCrossingsSql('steps', PER_STEP)}`; // one step per twin
const movedSelect = (channel: string | null) =>
  `(SELECT m.position::text FROM moves m) AS moved_position, (SELECT m.resource FROM moves m) AS moved_resource, ${crossingChangesJsonSql('t.id', channel)} AS crossings` +
  (channel ? `, ${notifyTwinChangesSql(channel, 'moves', 't.id')} AS notified` : '');
const NOT_MOVED = `NULL::text AS moved_position, NULL::text AS moved_resource, NULL::text AS crossings`;

/** The change-log CTE `c` of a write to the twin rows of CTE `t`: the twin's detail form as committed (webhooks send it, the write answers it). */
const twinChangeSql = (kind: 'twin.created' | 'twin.updated') =>
  recordChangesSql({ kind, from: 't', organization: 't.organization_id', twin: 't.id', subject: 't.id', resource: `${twinJsonSql('detail', 't')}::text` });

/**
 * CTEs of a statement that adds quest tasks in bulk (an embark's copies; `tasks` a CTE of their
 * `place_twin_id`): `locked_places` locks their place twins in id order, so statements sharing places
 * cannot deadlock, and `places` raises each one's `tasks_supplied` by its new tasks. A statement whose
 * CTEs nothing reads is run last-first by PostgreSQL, so the statement reads `places` in its FROM.
 */
export const raiseTasksSuppliedSql = (tasks: string): string => `locked_places AS (
         SELECT p.id FROM twins p WHERE p.id IN (SELECT place_twin_id FROM ${tasks}) ORDER BY p.id FOR NO KEY UPDATE
       ), places AS (
         UPDATE twins p SET tasks_supplied = p.tasks_supplied + c.n
           FROM (SELECT place_twin_id, count(*)::int AS n FROM ${tasks} WHERE place_twin_id IS NOT NULL GROUP BY place_twin_id) c
          WHERE p.id = c.place_twin_id AND p.id IN (SELECT id FROM locked_places)
         RETURNING p.id
       )`;

/** Every column of a twin, `location` as GeoJSON (what TwinRow describes). */
const COLUMNS = select(twins, 't', { expressions: { location: (t) => `ST_AsGeoJSON(${t}.location)::json` } });

/** The filters a list query sets (`own` is the list's scope and `sort` its order, not filters). */
const filtersOf = (query: TwinQuery): string[] =>
  Object.entries(query).filter(([key, value]) => key !== 'own' && key !== 'sort' && value !== undefined).map(([key]) => key);

/** True when a list has no filter beyond visibility (or own organization) and its own order: the counted, index-only paths below. */
const isUnfiltered = (query: TwinQuery): boolean => filtersOf(query).length === 0 && indexedOrder(query) !== undefined;

/** The sort keys the indexes of both visibility halves answer (`created`; migration TwinSortIndexes: `name`, `modified`). */
const INDEXED_SORT_KEYS = new Set(['created', 'name', 'modified']);

/** An unfiltered list's order when one index column gives it (its own, or one indexed `sort` key), else undefined. */
function indexedOrder(query: TwinQuery): { column: string; direction: string } | undefined {
  if (!query.sort) return { column: 'created', direction: '' };
  if (query.sort.length !== 1 || !INDEXED_SORT_KEYS.has(query.sort[0].key)) return undefined;
  return { column: query.sort[0].key, direction: query.sort[0].descending ? ' DESC' : '' };
}

/** Visible to every organization (the predicate of twins_shared_created_idx / twins_unshared_created_idx). */
const SHARED = sharedTwinSql('s');

/**
 * `count(*)` of the visible twins ($1: the caller's organization), from the trigger-kept twin_counts.
 * Cast back to bigint: `sum(bigint)` is numeric, which pg hands over as a string (the count is a number).
 */
const VISIBLE_COUNT = `SELECT ((SELECT coalesce(sum(c.shared), 0) FROM twin_counts c)
     + coalesce((SELECT c.total - c.shared FROM twin_counts c WHERE c.organization_id = $1::uuid), 0))::bigint AS count`;

/** `count(*)` of the caller's organization's twins. */
const OWN_COUNT = `SELECT coalesce((SELECT c.total FROM twin_counts c WHERE c.organization_id = $1::uuid), 0) AS count`;

/**
 * A page's size ($2) and offset ($3), hidden from the planner (unplannedValue): with them in sight, the
 * million-twin database planned the list page on every execution (custom plans cost less than the generic
 * plan that assumes a tenth of the twins), where 100,000 twins got the generic plan.
 */
const PAGE_SIZE = unplannedValue('$2::int');
const PAGE_OFFSET = unplannedValue('$3::bigint');
const PAGE_END = unplannedValue('$2::int + $3::bigint');

/**
 * The ids of a page of the visible twins in list order ($1 organization, $2 size, $3 offset). The
 * visibility rule is split into its two disjoint halves, each an index-only scan in list order (shared
 * twins; the organization's other twins); their merge skips `offset` entries in the indexes, and only
 * the rows of the page are read from the table.
 */
const visiblePageIds = ({ column: k, direction: d }: { column: string; direction: string }) => `SELECT u.id FROM (
            (SELECT s.id, s.${k} FROM twins s WHERE ${SHARED}
              ORDER BY s.${k}${d}, s.id${d} LIMIT ${PAGE_END})
            UNION ALL
            (SELECT s.id, s.${k} FROM twins s WHERE s.organization_id = $1::uuid AND NOT ${SHARED}
              ORDER BY s.${k}${d}, s.id${d} LIMIT ${PAGE_END})) u
           ORDER BY u.${k}${d}, u.id${d} LIMIT ${PAGE_SIZE} OFFSET ${PAGE_OFFSET}`;

/** The ids of a page of the caller's organization's twins: index-only over twins_organization_(name_|modified_)idx. */
const ownPageIds = ({ column: k, direction: d }: { column: string; direction: string }) =>
  `SELECT s.id FROM twins s WHERE s.organization_id = $1::uuid ORDER BY s.${k}${d}, s.id${d} LIMIT ${PAGE_SIZE} OFFSET ${PAGE_OFFSET}`;

/**
 * How a counted page is written: `item` is the JSON of one of the page's twins (`t`, numbered `t.n` in
 * list order), `columns` the twins columns the CTE `page` keeps (only what the items read: a wide row
 * copied into the CTE for nothing cost the geo listing a fifth of its PostgreSQL time), `included`
 * reads the same CTE when asked for.
 */
interface PageForm {
  item: string;
  /** How many items make a part of a few dozen kB (json-parts.ts). */
  itemsPerPart: number;
  columns: string;
  included?: string;
}

/**
 * Twins a part of a JSON:API list page (json-parts.ts): a twin is one to a few kB, so a part stays within
 * the socket's reads. One a row cost a small page's Node time a row object each.
 */
const TWINS_PER_PART = 8;

/** PageForm.columns of the forms whose items read the whole twins row (the JSON:API lists). */
const WHOLE_ROW = 't.*';

/** The text around a page's items: a JSON array, or a GeoJSON FeatureCollection. */
interface PageBrackets {
  open: string;
  close: string;
}
const ARRAY: PageBrackets = { open: '[', close: ']' };
const FEATURES: PageBrackets = { open: '{"type":"FeatureCollection","features":[', close: ']}' };

/**
 * One statement for a whole page: `count`, and the items of the twins that `pageRows` selects into the
 * CTE `page`, in parts (json-parts.ts: a long page as one text cost a full garbage collection every
 * dozen pages), one row per part with its place `g` (countedJsonOf orders them, more cheaply than an
 * ORDER BY here); `count` is on every row, `included` on a row of its own. The page is only
 * read and built when it is within the count (past the end the caller answers 404, having paid for the
 * count alone). With `size`, a count that must be computed (`count(*)` of a filter) is skipped when the
 * page itself tells it: a page that holds some rows but fewer than `size` is the last one, so the count
 * is `offset` plus its rows (a map listing of 955 twins in a page of 1,000 scanned its box twice).
 */
const countedPageSql = ({
  count,
  offset,
  size,
  pageRows,
  form,
  with_ = [],
  rows = 'page t',
}: {
  count: string;
  offset: string;
  size?: string;
  pageRows: string;
  form: PageForm;
  with_?: string[];
  /** What the items read, aliased `t` (the page's rows unless they are read by id: PAGE_ROWS_BY_ID). */
  rows?: string;
}) => {
  const counted = size
    ? `SELECT CASE WHEN r.rows > 0 AND r.rows < ${size} THEN ${offset} + r.rows ELSE (SELECT k.count FROM (${count}) k) END AS count
         FROM (SELECT count(*) AS rows FROM page) r`
    : count;
  // `c` is materialized because the outer SELECT reads its count twice or three times: as a subquery
  // it was inlined into each reference, and a full page counted its filter once per reference.
  // `page` is left to PostgreSQL, which materializes a CTE read twice (by `included`, or by the count of
  // a page that tells its own) and otherwise plans it inside the one subquery that reads it. Materialized
  // always, a list page copied its 50 whole rows into the CTE for nothing: 5–6 % of its PostgreSQL time.
  // The condition on the count inside the lateral subquery is a one-time filter: past the end, no item is built.
  // `included` is a row of its own, so its text is sent and read once, not with every part.
  const parts = `SELECT c.count, p.part, p.g::int AS g, NULL::text AS included
     FROM c LEFT JOIN LATERAL (${jsonArrayPartsSql(form.item, `${rows} WHERE ${offset} < c.count`, form.itemsPerPart)}) p ON true`;
  return `WITH ${[...with_, `page AS (${pageRows})`, `c AS MATERIALIZED (${counted})`].join(', ')}
   ${form.included ? `${parts}
   UNION ALL
   SELECT c.count, NULL, NULL, CASE WHEN ${offset} < c.count THEN ${form.included} ELSE '[]' END FROM c` : parts}`;
};

/** The whole rows of a page whose CTE keeps only `id` (and `organization_id`, for `included`), read by id. */
const PAGE_ROWS_BY_ID = '(SELECT t.*, p.n FROM page p JOIN twins t ON t.id = p.id) t';

/** A counted page's rows (countedPageSql) as its count, JSON text and included resources. */
const countedJsonOf = (rows: (JsonPart & RowOf<typeof COUNTED_PARTS>)[], { open, close }: PageBrackets): CountedJson => ({
  count: rows[0].count,
  data: joinJsonParts(rows, open, close),
  included: rows.find((row) => row.included !== null)?.included ?? null,
});

/** The organizations of the twins in the CTE `page`, each once, as JSON array text (`include=organization`). */
const includedOrganizationsSql = (fields: Fieldsets | undefined) =>
  `(SELECT coalesce(json_agg(${organizationJsonSql('o', fields?.organizations)} ORDER BY o.id), '[]'::json)::text
      FROM organizations o WHERE o.id IN (SELECT t.organization_id FROM page t))`;

const documentSql = (document: TwinDocument) => ({
  item: (t: string) => twinJsonSql(document.form, t, document.fields?.twins),
  included: document.includeOrganization ? includedOrganizationsSql(document.fields) : undefined,
});

/** What distinguishes one document's SQL from another's (the SqlTexts keys below). */
const documentKey = (document: TwinDocument): string =>
  `${document.form}|${fieldsetKey(document.fields?.twins)}|${document.includeOrganization ? fieldsetKey(document.fields?.organizations) : '-'}`;

const detailTexts = new SqlTexts();

/**
 * The statements of the unfiltered lists' counted pages, one per list, order and document: their text
 * depends on nothing else. Built on every request, the text (several kB) was then hashed again as a new
 * string to name its prepared statement, which showed in a CPU profile of the running service.
 */
const unfilteredPageTexts = new SqlTexts();

/** One visible twin's document ($1 organization, $2 id): its JSON text, what it includes, its version. */
const visibleJsonSql = (document: TwinDocument): string =>
  detailTexts.get(documentKey(document), () => {
    const { item, included } = documentSql(document);
    return included
      ? `WITH page AS (SELECT t.* FROM twins t WHERE t.id = $2 AND ${visibleTwinSql('t', '$1')})
         SELECT ${item('t')}::text AS data, ${included} AS included, ${versionSql('t')} AS version FROM page t`
      : `SELECT ${item('t')}::text AS data, NULL::text AS included, ${versionSql('t')} AS version FROM twins t WHERE t.id = $2 AND ${visibleTwinSql('t', '$1')}`;
  });

/** Keys of `sort` (each with its position cast); `distance` is the distance from `point`, twins without a location last. */
const SORT_KEYS: Record<string, { sql: (a: string, distance: (a: string) => string) => string; cast: string }> = {
  name: { sql: (a) => `${a}.name`, cast: '::text' },
  created: { sql: (a) => `${a}.created`, cast: '::timestamptz' },
  modified: { sql: (a) => `${a}.modified`, cast: '::timestamptz' },
  distance: { sql: (a, distance) => `coalesce(${distance(a)}, 'Infinity'::float8)`, cast: '::float8' },
};
const ID_KEY = (descending: boolean): KeysetKey => ({ sql: (a) => `${a}.id`, cast: '::uuid', descending });
const CREATED_KEY: KeysetKey = { sql: (a) => `${a}.created`, cast: '::timestamptz', descending: false };

/** The page's rows from the ids `pageIds` selects in list order (an index-only scan): only they are read from the table. */
const rowsOfIds = (columns: string, pageIds: string) => `SELECT ${columns}, p.n FROM unnest(ARRAY(${pageIds})) WITH ORDINALITY AS p(id, n) JOIN twins t ON t.id = p.id`;

/** A GeoJSON Feature of the twins row `t` (the map listing's items). */
const FEATURE_JSON = `json_build_object('id', t.id::text, 'type', 'Feature', 'geometry', ST_AsGeoJSON(t.location)::json,
    'properties', json_build_object('twin_id', t.id::text, 'name', t.name, 'description', t.description))`;
const FEATURE_COLLECTION: PageForm = {
  item: FEATURE_JSON,
  // ~340 bytes a feature.
  itemsPerPart: 100,
  columns: 't.id, t.location, t.name, t.description',
};

interface Compiled {
  /** The conditions over the twins row aliased `t`. */
  where: string;
  orderBy: string;
  /** The order as keyset keys; null when it is the nearest-first index scan (no keys to continue from). */
  keys: KeysetKey[] | null;
  params: SqlParams;
}

const geographyPoint = (p: SqlParams, lon: number, lat: number) =>
  `ST_SetSRID(ST_MakePoint(${p.add(lon, '::float8')}, ${p.add(lat, '::float8')}), 4326)::geography`;

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
const PLACE_REFRESHED = [
  'name', 'description', 'public', 'location', 'characteristics', 'services', 'meta_data', 'provider',
  'opening_hours', 'phone_number', 'address', 'city', 'state', 'website', 'provider_info', 'tags',
] as const satisfies readonly ColumnOf<typeof twins>[];

/** The record of one feature in the batch parameter: the imported columns typed as in the schema, and the point. */
const PLACE_RECORD = [...IMPORTED_COLUMNS.map((column) => `${column} ${sqlTypeOf(twins, column)}`), 'lon float8', 'lat float8'].join(', ');

/** Whether the organization has a geofence (SQL over parameter $1): the import's crossings are skipped at once when not. */
const FENCED = `EXISTS (SELECT 1 FROM geofences g WHERE g.organization_id = $1::uuid)`;

/**
 * Locks the twins a batch of places refreshes, in id order, before the upsert reads where they were: the
 * upsert's own snapshot then holds their last locations, which no other write can change until commit, so
 * a move by the import and one by a device take turns and record each crossing once. Only when the
 * organization has geofences (nothing else needs where a place was).
 */
const LOCK_PLACES = `
  SELECT count(*)::int AS locked FROM (
    SELECT 1 FROM twins w
     WHERE w.organization_id = $1::uuid AND w.place_id = ANY ($2::text[]) AND ${FENCED}
     ORDER BY w.id FOR NO KEY UPDATE OF w) l`;

const upsertPlacesSql = (channel: string | null) => `
  WITH input AS MATERIALIZED (
    SELECT * FROM jsonb_to_recordset($2::jsonb) AS r(${PLACE_RECORD})
  ), was AS MATERIALIZED (
    -- Where the refreshed twins were (this statement's snapshot: LOCK_PLACES holds them), for the crossings.
    SELECT w.id, w.location FROM twins w
     WHERE w.organization_id = $1::uuid AND w.place_id IN (SELECT i.place_id FROM input i) AND ${FENCED}
  ), t AS (
  INSERT INTO twins AS t (
    organization_id, owner_account_id, personal, public, place_id, provider, name, description, location, location_occurred,
    characteristics, services, meta_data, opening_hours, phone_number, address, city, state, website,
    provider_info, tags
  )
  SELECT $1::uuid, NULL, false, true, r.place_id, r.provider, r.name, r.description,
         ST_SetSRID(ST_MakePoint(r.lon, r.lat), 4326), now(),
         r.characteristics, r.services,
         r.meta_data || jsonb_build_object('provider_info', r.provider_info,
                                           'opening_hours', coalesce(r.opening_hours -> 'weekday_text', '[]'::jsonb)),
         r.opening_hours, r.phone_number, r.address, r.city,
         r.state, r.website, r.provider_info, r.tags
    FROM input r
  ON CONFLICT (organization_id, place_id) WHERE place_id IS NOT NULL DO UPDATE SET
    ${PLACE_REFRESHED.map((column) => `${column} = EXCLUDED.${column}`).join(',\n    ')},
    location_occurred = CASE WHEN t.location IS DISTINCT FROM EXCLUDED.location THEN now() ELSE t.location_occurred END,
    modified = now()
  WHERE (${PLACE_REFRESHED.map((column) => `t.${column}`).join(', ')})
        IS DISTINCT FROM (${PLACE_REFRESHED.map((column) => `EXCLUDED.${column}`).join(', ')})
  RETURNING (t.xmax = 0) AS inserted, t.id, t.organization_id, t.location, t.location_occurred
  ), placed AS (
    -- A place put somewhere (new, or moved by the re-import) is at a position that occurred now: its
    -- location_occurred is this transaction's now(), which no earlier write can have set.
    INSERT INTO positions (organization_id, twin_id, occurred, location)
    SELECT t.organization_id, t.id, t.location_occurred, t.location FROM t WHERE t.location_occurred = now()
    ON CONFLICT (organization_id, twin_id, occurred) DO NOTHING
  ), steps AS (
    SELECT t.organization_id, t.id AS twin_id, t.location_occurred AS occurred, t.location, w.location AS before
      FROM t LEFT JOIN was w ON w.id = t.id
     WHERE t.location_occurred = now() AND ${FENCED}
  ), ${geofenceCrossingsSql('steps', PER_STEP)}
  SELECT t.inserted,
         (SELECT count(*) FROM (SELECT ${channel ? notifyChangeSql(channel, 'gc') : '1'} FROM geofence_changes gc ORDER BY gc.position) n)::int AS crossings
    FROM t`;

const UPSERTED = rowShape({ inserted: 'boolean', crossings: 'integer' });
const LOCKED = rowShape({ locked: 'integer' });

/**
 * SQL for twins. Every read is limited by the visibility rule (or the caller's organization) in its
 * WHERE clause, so a twin the caller cannot see is never returned.
 */
@Injectable()
export class TwinsRepository {
  constructor(private readonly sql: Sql) {}

  /** A bare twin owned by an account (bootstrap, admin tooling). */
  async insertOwned(twin: NewTwin): Promise<{ id: string }> {
    return this.sql.one(
      ID,
      `INSERT INTO twins (organization_id, owner_account_id, name, description, personal)
       VALUES ($1, $2, $3, $4, $5) RETURNING id`,
      [twin.organizationId, twin.ownerAccountId, twin.name, twin.description ?? '', twin.personal ?? false],
    );
  }

  /**
   * Inserts the rows as public supplier twins of the organization, or refreshes the twin already
   * imported with the same place_id. Rows whose data did not change are left alone (no new row
   * version, `modified` kept). Place ids must be unique within `rows`. A batch travels as ONE jsonb
   * parameter (an array of row objects) that `jsonb_to_recordset` turns into typed columns on the
   * server: one round trip and one statement per batch, no per-row parameters, and JSON arrays land
   * directly in the text[] columns.
   */
  async upsertPlaces(organizationId: string, rows: PlaceTwinRow[], channel: string | null): Promise<{ inserted: number; updated: number; crossings: number }> {
    return this.sql.transaction(async () => {
      // A crash can lose the last batches of the import, never corrupt them; re-running the import
      // restores them (it is idempotent). Worth it: no WAL flush wait per batch.
      await this.sql.run(`SET LOCAL synchronous_commit TO OFF`);
      await this.sql.one(LOCKED, LOCK_PLACES, [organizationId, rows.map((row) => row.place_id)]);
      const result = await this.sql.rows(UPSERTED, upsertPlacesSql(channel), [organizationId, JSON.stringify(rows, withoutRepeatedMetaData)]);
      const inserted = result.filter((row) => row.inserted).length;
      return { inserted, updated: result.length - inserted, crossings: result[0]?.crossings ?? 0 };
    });
  }


  /**
   * Counts a new quest task naming `placeTwinId` as its place (in the caller's transaction). Not a change
   * of `modified`: the twin's version reads `tasks_supplied` itself (versionSql).
   */
  async raiseTasksSupplied(placeTwinId: string): Promise<void> {
    await this.sql.run(`UPDATE twins SET tasks_supplied = tasks_supplied + 1 WHERE id = $1`, [placeTwinId]);
  }

  /**
   * WHERE and ORDER BY of a list. Order is deterministic (the id last) and, without `sort`,
   * `personality` or `ordering`, follows twins_created_idx / twins_organization_idx. `forKeyset`: the
   * order must be keys a position can continue from (no nearest-first index scan).
   */
  private compile(tenant: Tenant, query: TwinQuery, forKeyset = false): Compiled {
    const p = new SqlParams();
    const organization = p.add(tenant.organization.id, '::uuid');
    const conditions = [query.own ? `t.organization_id = ${organization}` : visibleTwinSql('t', organization)];

    conditions.push(...twinFilterConditions(p, tenant, query));
    if (query.in_bbox) {
      const b = query.in_bbox;
      conditions.push(
        `t.location && ST_MakeEnvelope(${p.add(b.minLon, '::float8')}, ${p.add(b.minLat, '::float8')}, ${p.add(b.maxLon, '::float8')}, ${p.add(b.maxLat, '::float8')}, 4326)`,
      );
    }
    if (query.located) conditions.push('t.location IS NOT NULL');
    // The geography cast matches twins_location_geography_gist: metres, answered by the index.
    const point = query.point ? geographyPoint(p, query.point.lon, query.point.lat) : undefined;
    const distance = (a: string) => `${a}.location::geography <-> ${point}`;
    if (point && query.dist !== undefined) {
      conditions.push(`ST_DWithin(t.location::geography, ${point}, ${p.add(query.dist, '::float8')})`);
    }
    let characteristics: string | undefined;
    if (query.personality) {
      characteristics = p.add(query.personality.characteristics, '::text[]');
      conditions.push(`t.characteristics && ${characteristics}`, `t.id <> ${p.add(query.personality.id, '::uuid')}`);
    }
    const where = conditions.join('\n    AND ');

    if (query.sort) {
      const keys = query.sort.map(({ key, descending }): KeysetKey => ({ sql: (a) => SORT_KEYS[key].sql(a, distance), cast: SORT_KEYS[key].cast, descending }));
      keys.push(ID_KEY(query.sort[query.sort.length - 1].descending));
      return { where, orderBy: keysetOrder(keys, 't'), keys, params: p };
    }
    const nearestFirst = point !== undefined && query.ordering === 'distance';
    // Nearest first without a radius is a KNN scan of twins_location_geography_gist, which PostgreSQL
    // only uses when the distance is the sole sort key: twins at the very same distance then have no
    // fixed order. Within a radius (dist) the candidates are few and `created, id` break ties; keyset
    // pages need the ties broken too.
    if (nearestFirst && query.dist === undefined && !characteristics && !forKeyset) return { where, orderBy: distance('t'), keys: null, params: p };
    const keys: KeysetKey[] = [];
    if (nearestFirst) keys.push({ sql: (a) => SORT_KEYS.distance.sql(a, distance), cast: '::float8', descending: false });
    if (characteristics) {
      keys.push({ sql: (a) => `cardinality(ARRAY(SELECT unnest(${a}.characteristics) INTERSECT SELECT unnest(${characteristics})))`, cast: '::int', descending: true });
    }
    keys.push(CREATED_KEY, ID_KEY(false));
    return { where, orderBy: keysetOrder(keys, 't'), keys, params: p };
  }

  /** A page of twins as `document` says, with the count, in one statement (see countedPageSql). */
  async page(tenant: Tenant, query: TwinQuery, page: PageRequest, document: TwinDocument): Promise<CountedJson> {
    const form = (): PageForm => {
      const { item, included } = documentSql(document);
      return { item: item('t'), itemsPerPart: TWINS_PER_PART, columns: WHOLE_ROW, included };
    };
    return this.countedPage(tenant, query, page, { key: documentKey(document), form, brackets: ARRAY });
  }

  /**
   * A keyset page of twins (keyset.ts), in one statement and without a count. Unfiltered lists in their
   * own order read each half of the visibility rule from its index, from the position on.
   */
  async keysetPage(tenant: Tenant, query: TwinQuery, request: CursorRequest, document: TwinDocument): Promise<KeysetRows> {
    const { where, keys, params } = this.compile(tenant, query, true);
    const { item, included } = documentSql(document);
    let rows: (condition: string, order: string, limit: string) => string;
    if (isUnfiltered(query)) {
      const organization = '$1::uuid';
      const half = (predicate: string, condition: string, order: string, limit: string) =>
        `(SELECT t.* FROM twins t WHERE ${predicate} AND ${condition} ORDER BY ${order} LIMIT ${limit})`;
      rows = query.own
        ? (condition, order, limit) => `SELECT t.* FROM twins t WHERE t.organization_id = ${organization} AND ${condition} ORDER BY ${order} LIMIT ${limit}`
        : (condition, order, limit) =>
            `SELECT t.* FROM (${half(sharedTwinSql('t'), condition, order, limit)} UNION ALL ${half(`t.organization_id = ${organization} AND NOT ${sharedTwinSql('t')}`, condition, order, limit)}) t
              ORDER BY ${order} LIMIT ${limit}`;
    } else {
      rows = (condition, order, limit) => `SELECT t.* FROM twins t WHERE ${where} AND ${condition} ORDER BY ${order} LIMIT ${limit}`;
    }
    const sql = keysetPageSql(
      {
        rows,
        keys: keys!,
        items: (pageRows, order) => `(SELECT coalesce(json_agg(${item('t')} ORDER BY ${order}), '[]'::json)::text FROM (${pageRows}) t)`,
        included,
        direction: request.direction,
        position: request.position,
        size: request.size,
      },
      params,
    );
    return this.sql.one(KEYSET_ROWS, sql, params.values);
  }

  /**
   * One page of the geo listing, `data` a GeoJSON FeatureCollection built by PostgreSQL (JSON text,
   * never parsed here), with the count. Only twins with a location.
   */
  async featureCollection(tenant: Tenant, query: TwinQuery, page: PageRequest): Promise<CountedJson> {
    // A map tolerates a replica's lag (DATABASE_REPLICA_URLS): nobody expects a twin in it the instant it is saved.
    return this.countedPage(tenant, { ...query, located: true }, page, { key: 'features', form: () => FEATURE_COLLECTION, brackets: FEATURES }, { lagTolerant: true });
  }

  /** A counted page written as `written.form()` says; `written.key` tells its SQL apart from other forms' (documentKey). */
  private async countedPage(
    tenant: Tenant,
    query: TwinQuery,
    page: PageRequest,
    written: { key: string; form: () => PageForm; brackets: PageBrackets },
    { lagTolerant = false } = {},
  ): Promise<CountedJson> {
    const read = (sql: string, values: unknown[]) => (lagTolerant ? this.sql.replicaRows(COUNTED_PARTS, sql, values) : this.sql.rows(COUNTED_PARTS, sql, values));
    const order = isUnfiltered(query) ? indexedOrder(query) : undefined;
    if (order) {
      const list = query.own ? 'own' : 'visible';
      const sql = unfilteredPageTexts.get(`${list}|${order.column}${order.direction}|${written.key}`, () => {
        // twin_counts is kept by triggers in the writing transactions (migration 1763790000000): exact, O(organizations).
        const [count, ids] = query.own ? [OWN_COUNT, ownPageIds(order)] : [VISIBLE_COUNT, visiblePageIds(order)];
        const form = written.form();
        return countedPageSql({ count, offset: '$3::bigint', pageRows: rowsOfIds(form.columns, ids), form });
      });
      return countedJsonOf(await read(sql, [tenant.organization.id, page.size, page.offset]), written.brackets);
    }
    const form = written.form();
    const { where, orderBy, params } = this.compile(tenant, query);
    const size = params.add(page.size, '::int');
    const offset = params.add(page.offset, '::bigint');
    const limit = `LIMIT ${size} OFFSET ${offset}`;
    const numbered = `row_number() OVER (ORDER BY ${orderBy}) AS n`;
    let sql: string;
    if (query.dist !== undefined) {
      // A radius is an expensive test (geography distance) over few candidates: it runs once, into a
      // CTE that both the count and the page read.
      const candidates = `f AS MATERIALIZED (SELECT t.* FROM twins t WHERE ${where})`;
      const pageRows = `SELECT ${form.columns}, ${numbered} FROM f t ORDER BY ${orderBy} ${limit}`;
      sql = countedPageSql({ count: 'SELECT count(*) AS count FROM f', offset, pageRows, form, with_: [candidates] });
    } else if (form.columns === WHOLE_ROW) {
      // This page is read twice (by the items and by the count of a page that tells its own), so
      // PostgreSQL materializes it: whole rows copied for nothing were a large share of a provider's
      // page's PostgreSQL time. The CTE keeps the ids, and the items read the rows by id.
      const pageRows = `SELECT t.id, t.organization_id, ${numbered} FROM twins t WHERE ${where} ORDER BY ${orderBy} ${limit}`;
      sql = countedPageSql({ count: this.countSql(tenant, query, where), offset, size, pageRows, form, rows: PAGE_ROWS_BY_ID });
    } else {
      const pageRows = `SELECT ${form.columns}, ${numbered} FROM twins t WHERE ${where} ORDER BY ${orderBy} ${limit}`;
      sql = countedPageSql({ count: this.countSql(tenant, query, where), offset, size, pageRows, form });
    }
    return countedJsonOf(await read(sql, params.values), written.brackets);
  }

  /**
   * The count of a filtered list. An `organization` filter alone is read from twin_counts: the caller's
   * own organization shows all its twins (`total`), another one its shared twins (`shared`).
   */
  private countSql(tenant: Tenant, query: TwinQuery, where: string): string {
    const filters = filtersOf(query);
    if (!query.own && filters.length === 1 && filters[0] === 'organization') {
      // compile() numbered the caller's organization $1 and the filter's organization $2.
      return `SELECT coalesce((SELECT CASE WHEN c.organization_id = $1::uuid THEN c.total ELSE c.shared END
                 FROM twin_counts c WHERE c.organization_id = $2::uuid), 0)::bigint AS count`;
    }
    return `SELECT count(*) AS count FROM twins t WHERE ${where}`;
  }

  /** One twin the caller can see, in detail form as `document` says (JSON text built by PostgreSQL), with its version. */
  async findVisibleJson(tenant: Tenant, id: string, document: TwinDocument): Promise<{ data: string; included: string | null; version: string } | undefined> {
    return this.sql.first(DOCUMENT, visibleJsonSql(document), [tenant.organization.id, id]);
  }

  /** The version of a twin the caller can see (a conditional GET's one cheap statement). */
  async visibleVersion(tenant: Tenant, id: string): Promise<string | undefined> {
    const row = await this.sql.first(
      VERSION,
      `SELECT ${versionSql('t')} AS version FROM twins t WHERE t.id = $2 AND ${visibleTwinSql('t', '$1')}`,
      [tenant.organization.id, id],
    );
    return row?.version;
  }

  /** Whether the caller's organization has a twin with this id (a refused If-Match: 412, or 404). */
  async ownExists(tenant: Tenant, id: string): Promise<boolean> {
    return this.sql.exists(`SELECT 1 FROM twins WHERE id = $1 AND organization_id = $2`, [id, tenant.organization.id]);
  }

  /** One twin the caller can see. */
  async findVisible(tenant: Tenant, id: string): Promise<TwinRow | undefined> {
    return this.sql.first(TWIN, `SELECT ${COLUMNS} FROM twins t WHERE t.id = $2 AND ${visibleTwinSql('t', '$1')}`, [tenant.organization.id, id]);
  }

  /** Which of `ids` name twins the caller can see. */
  async visibleIds(tenant: Tenant, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.sql.rows(
      ID,
      `SELECT t.id FROM twins t WHERE t.id = ANY ($2::uuid[]) AND ${visibleTwinSql('t', '$1')}`,
      [tenant.organization.id, ids],
    );
    return new Set(rows.map((row) => row.id));
  }

  /**
   * A new twin of the caller's organization, owned by the calling account, under `id` when the client
   * chose one; undefined when that id is taken. A location is its first position (occurred now).
   * `channel` (the event bus's NOTIFY channel, or null) announces that move.
   */
  async create(tenant: Tenant, changes: TwinChanges, id: string | undefined, channel: string | null): Promise<WrittenTwin | undefined> {
    const p = new SqlParams();
    const columns = ['organization_id', 'owner_account_id'];
    const values = [p.add(tenant.organization.id, '::uuid'), p.add(tenant.account.id, '::uuid')];
    if (id !== undefined) {
      columns.push('id');
      values.push(p.add(id, '::uuid'));
    }
    for (const [column, value] of this.assignments(p, changes)) {
      columns.push(column);
      values.push(value);
    }
    const located = changes.location != null;
    return this.sql.first(
      located && channel ? WRITTEN_NOTIFYING : WRITTEN,
      `WITH t AS (
         INSERT INTO twins (${columns.join(', ')}) VALUES (${values.join(', ')})
         ON CONFLICT (id) DO NOTHING RETURNING *
       ), c AS (${twinChangeSql('twin.created')})${located ? `, ${locationPositionSql('NULL::geometry')}` : ''}
       SELECT t.id, c.resource AS document, ${versionSql('t')} AS version, ${located ? movedSelect(channel) : NOT_MOVED} FROM t JOIN c ON c.subject_id = t.id`,
      p.values,
    );
  }

  /**
   * Changes a twin of the caller's organization; undefined when there is none with that id (twins
   * of other organizations are not writable, whether or not they are visible), or when `versions` is
   * given and the twin's version is not among them (If-Match: checked in the UPDATE itself, so no
   * concurrent change slips between the check and the write). A new location is a position (occurred
   * now), announced on `channel` as for create.
   */
  async update(tenant: Tenant, id: string, changes: TwinChanges, versions: string[] | undefined, channel: string | null): Promise<WrittenTwin | undefined> {
    const p = new SqlParams();
    const organization = p.add(tenant.organization.id, '::uuid');
    const twin = p.add(id, '::uuid');
    const sets = this.assignments(p, changes).map(([column, value]) => `${column} = ${value}`);
    sets.push('modified = now()');
    const located = changes.location != null;
    const precondition = versions ? ` AND ${versionSql('t')} = ANY (${p.add(versions, '::text[]')})` : '';
    return this.sql.first(
      located && channel ? WRITTEN_NOTIFYING : WRITTEN,
      // A new location crosses geofences from where the twin was: read from its row locked first (the
      // UPDATE joins it, so it is taken before the write), as the positions statement reads it.
      located
        ? `WITH was AS MATERIALIZED (
             SELECT w.id, w.location FROM twins w WHERE w.id = ${twin} AND w.organization_id = ${organization} FOR NO KEY UPDATE
           ), t AS (
             UPDATE twins AS t SET ${sets.join(', ')} FROM was WHERE t.id = was.id AND t.id = ${twin} AND t.organization_id = ${organization}${precondition}
             RETURNING t.*, was.location AS was_at
           ), c AS (${twinChangeSql('twin.updated')}), ${locationPositionSql('t.was_at')}
           SELECT t.id, c.resource AS document, ${versionSql('t')} AS version, ${movedSelect(channel)} FROM t JOIN c ON c.subject_id = t.id`
        : `WITH t AS (
         UPDATE twins AS t SET ${sets.join(', ')} WHERE t.id = ${twin} AND t.organization_id = ${organization}${precondition}
         RETURNING t.*
       ), c AS (${twinChangeSql('twin.updated')})
       SELECT t.id, c.resource AS document, ${versionSql('t')} AS version, ${NOT_MOVED} FROM t JOIN c ON c.subject_id = t.id`,
      p.values,
    );
  }

  /** `[column, value expression]` for each given change; column names come from WRITABLE only. */
  private assignments(p: SqlParams, changes: TwinChanges): [string, string][] {
    const out: [string, string][] = [];
    for (const [column, value] of Object.entries(changes)) {
      if (value === undefined) continue;
      if (column === 'location') {
        // A location set by hand is where the twin is now: its position occurred now (none when removed).
        const point = value as GeoPoint | null;
        out.push([
          'location',
          point ? `ST_SetSRID(ST_MakePoint(${p.add(point.coordinates[0], '::float8')}, ${p.add(point.coordinates[1], '::float8')}), 4326)` : 'NULL',
        ]);
        out.push(['location_occurred', point ? 'now()' : 'NULL']);
        continue;
      }
      if (!WRITABLE.has(column)) throw new Error(`Not a writable twin column: ${column}`);
      const cast = castOf(twins, column as keyof TwinChanges);
      out.push([column, p.add(cast === '::jsonb' ? JSON.stringify(value) : value, cast)]);
    }
    return out;
  }
}
