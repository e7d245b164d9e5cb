import { Injectable } from '@nestjs/common';
import type { Tenant } from '../common/auth/tenant.js';
import { joinJsonParts, jsonArrayPartsSql } from '../database/json-parts.js';
import { rowShape, typed } from '../database/row-shape.js';
import { twins } from '../database/schema/index.js';
import { oneOffSql } from '../database/pooled-queries.js';
import { Sql } from '../database/sql.js';
import { SqlParams, unplannedValue } from '../database/sql-params.js';
import { SqlTexts } from '../database/sql-texts.js';
import { isoTimestampSql } from '../database/timestamps.js';
import { twinFilterConditions, type TwinFilterValues } from '../twins/twin-conditions.js';
import { sharedTwinSql, visibleTwinSql } from '../twins/twin-visibility.js';
import type { Expression } from './cql2/cql2-ast.js';
import { compileFilter, type CompileOptions } from './cql2/cql2-sql.js';
import type { Box, ModifiedRange } from './ogc-query.js';
import { TWIN_QUERYABLES } from './ogc-queryables.js';
import { featureJsonSql, type TwinsExtent } from './ogc.resource.js';

/** Which twins an items page shows, beside visibility and a location. */
export interface ItemsFilter {
  /** The list filters of `GET /twins/` (is_public, is_supplier, characteristics, …). */
  filters: TwinFilterValues;
  bbox?: Box[];
  datetime?: ModifiedRange;
  /** A parsed CQL2 filter, compiled here over TWIN_QUERYABLES. */
  filter?: { expression: Expression; options: CompileOptions };
}

/** A keyset page's place: after (or before) the twin `position`, or from the start (the end, for `before`). */
export interface ItemsPageRequest {
  direction: 'after' | 'before';
  position: string | null;
  size: number;
  /** The properties each feature shows (all when undefined). */
  properties?: readonly string[];
}

/** A page as read: its features as JSON array text, the ids at its ends (null when empty), whether more follow in the reading direction. */
export interface ItemsPage {
  features: string;
  count: number;
  first: string | null;
  last: string | null;
  more: boolean;
}

/**
 * Features a part of a page (json-parts.ts): a twin's feature with all its properties is a few kB (an
 * imported place's provider info and reviews), one with a few properties a few hundred bytes.
 */
const FEATURES_PER_PART = 25;
const LEAN_FEATURES_PER_PART = 100;

const PAGE_PARTS = rowShape({ rows: 'integer', first: 'text?', last: 'text?', part: 'text?', g: 'integer?' });
const FEATURE = rowShape({ feature: 'text' });
const EXTENT = rowShape({ west: typed<number | null>(), south: typed<number | null>(), east: typed<number | null>(), north: typed<number | null>(), first: 'text?', latest: 'text?' });

const TWIN_COLUMNS: ReadonlySet<string> = new Set(Object.keys(twins.columns));

/** The twins columns a SQL text of the row `t` reads (the page copies only those; a wide row copied for nothing is a large share of a lean page's time). */
const readColumns = (sql: string): string[] => ['id', ...new Set([...sql.matchAll(/\bt\.([a-z_]+)\b/g)].map((m) => m[1]).filter((c) => c !== 'id' && TWIN_COLUMNS.has(c)))];

/** The feature SQL of a set of properties, and the columns it reads. */
const featureForms = new SqlTexts();
const featureForm = (properties: readonly string[] | undefined) => {
  const key = properties ? properties.join(',') : '*';
  const item = featureForms.get(`item|${key}`, () => featureJsonSql('t', properties));
  const columns = featureForms.get(`columns|${key}`, () => readColumns(item).map((c) => `t.${c}`).join(', '));
  return { item, columns, perPart: properties && properties.length <= 4 ? LEAN_FEATURES_PER_PART : FEATURES_PER_PART };
};

/**
 * SQL of the OGC API – Features service: the visible located twins as features. Every statement
 * filters by the twin visibility rule and the list filters as `GET /twins/` does (the twins feature's
 * declarations, twin-visibility.ts and twin-conditions.ts), so a twin the caller cannot see is never
 * read. Pages are keyset pages in `id` order: a page after a position is an index range scan from it
 * (or, with a box or filter, the same scan of the spatial index whatever the depth), never an OFFSET.
 */
@Injectable()
export class OgcRepository {
  constructor(private readonly sql: Sql) {}

  /** One page of features, in one statement. */
  async items(tenant: Tenant, filter: ItemsFilter, page: ItemsPageRequest): Promise<ItemsPage> {
    const p = new SqlParams();
    const conditions = this.conditions(p, tenant, filter);
    const reversed = page.direction === 'before';
    if (page.position !== null) conditions.push(`t.id ${reversed ? '<' : '>'} ${unplannedValue(p.add(page.position, '::uuid'))}`);
    const size = p.add(page.size, '::int');
    const order = reversed ? 'DESC' : 'ASC';
    const { item, columns, perPart } = featureForm(page.properties);
    // `page`: one more row than the page in reading order (whether more follow), `r` numbering them;
    // the page's rows in `id` order are numbered `n` for the parts.
    const sql = `WITH page AS MATERIALIZED (
         SELECT ${columns}, row_number() OVER (ORDER BY t.id ${order}) AS r
           FROM (SELECT ${columns} FROM twins t WHERE ${conditions.join('\n            AND ')}
                  ORDER BY t.id ${order} LIMIT ${unplannedValue(`${size} + 1`)}) t),
       kept AS (SELECT t.*, row_number() OVER (ORDER BY t.id) AS n FROM page t WHERE t.r <= ${size})
       SELECT c.rows, c.first, c.last, f.part, f.g::int AS g
         FROM (SELECT (SELECT count(*) FROM page)::int AS rows, (SELECT min(k.id::text) FROM kept k) AS first, (SELECT max(k.id::text) FROM kept k) AS last) c
         LEFT JOIN LATERAL (${jsonArrayPartsSql(item, 'kept t', perPart)}) f ON true`;
    // A map tolerates a replica's lag (DATABASE_REPLICA_URLS), as the geo listing does. A CQL2 filter's
    // text is the client's shape: it is not kept as a prepared statement.
    const rows = await this.sql.replicaRows(PAGE_PARTS, filter.filter ? oneOffSql(sql) : sql, p.values);
    const count = Math.min(rows[0].rows, page.size);
    return { features: joinJsonParts(rows), count, first: rows[0].first, last: rows[0].last, more: rows[0].rows > page.size };
  }

  /** One visible located twin as a feature (JSON text), or undefined. */
  async item(tenant: Tenant, id: string): Promise<string | undefined> {
    const row = await this.sql.first(
      FEATURE,
      `SELECT ${featureJsonSql('t')}::text AS feature FROM twins t WHERE t.id = $2::uuid AND t.location IS NOT NULL AND ${visibleTwinSql('t', '$1::uuid')}`,
      [tenant.organization.id, id],
    );
    return row?.feature;
  }

  /**
   * The bounding box of the located twins every organization sees (public or supplier) and the interval
   * of their `modified`: one scan of them all (seconds at a million twins), the same for every caller.
   */
  async sharedExtent(): Promise<TwinsExtent> {
    return this.extentOf(`${sharedTwinSql('t')}`, []);
  }

  /** The same of the caller's organization's other located twins (the rest of what it sees), from its index. */
  async ownExtent(tenant: Tenant): Promise<TwinsExtent> {
    return this.extentOf(`t.organization_id = $1::uuid AND NOT ${sharedTwinSql('t')}`, [tenant.organization.id]);
  }

  private async extentOf(condition: string, values: unknown[]): Promise<TwinsExtent> {
    const row = await this.sql.replicaOne(
      EXTENT,
      `SELECT ST_XMin(e.box) AS west, ST_YMin(e.box) AS south, ST_XMax(e.box) AS east, ST_YMax(e.box) AS north,
              ${isoTimestampSql('e.first')} AS first, ${isoTimestampSql('e.latest')} AS latest
         FROM (SELECT ST_Extent(t.location)::box2d AS box, min(t.modified) AS first, max(t.modified) AS latest
                 FROM twins t WHERE t.location IS NOT NULL AND ${condition}) e`,
      values,
    );
    const bbox = row.west === null ? null : ([row.west, row.south, row.east, row.north] as [number, number, number, number]);
    return { bbox, interval: [row.first, row.latest] };
  }

  /** The conditions of an items page over the twins row `t`, their values added to `p`. */
  private conditions(p: SqlParams, tenant: Tenant, { filters, bbox, datetime, filter }: ItemsFilter): string[] {
    const conditions = [visibleTwinSql('t', p.add(tenant.organization.id, '::uuid')), 't.location IS NOT NULL', ...twinFilterConditions(p, tenant, filters)];
    if (bbox) {
      const envelope = (b: Box) =>
        `t.location && ST_MakeEnvelope(${p.add(b.west, '::float8')}, ${p.add(b.south, '::float8')}, ${p.add(b.east, '::float8')}, ${p.add(b.north, '::float8')}, 4326)`;
      conditions.push(bbox.length === 1 ? envelope(bbox[0]) : `(${bbox.map(envelope).join(' OR ')})`);
    }
    if (datetime?.start !== undefined) conditions.push(`t.modified >= ${p.add(datetime.start, '::timestamptz')}`);
    if (datetime?.end !== undefined) conditions.push(`t.modified ${datetime.endExclusive ? '<' : '<='} ${p.add(datetime.end, '::timestamptz')}`);
    if (filter) conditions.push(compileFilter(filter.expression, TWIN_QUERYABLES, p, 't', filter.options));
    return conditions;
  }
}
