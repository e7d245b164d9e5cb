import { Injectable } from '@nestjs/common';
import type { Tenant } from '../common/auth/tenant.js';
import { Sql } from '../database/sql.js';
import { rowShape, typed } from '../database/row-shape.js';
import { SqlParams } from '../database/sql-params.js';
import { oneOffSql } from '../database/pooled-queries.js';
import { twinFilterConditions, type TwinFilterValues } from '../twins/twin-conditions.js';
import { visibleTwinSql } from '../twins/twin-visibility.js';
import { encodeTwinsLayer, type FeatureRow } from './mvt-encoder.js';
import { tileKeyRange, type Tile } from './tile-coordinates.js';

/** Mapbox Vector Tile geometry units per tile side, and the cluster grid's cells per side. */
const TILE_EXTENT = 4096;
const CLUSTER_GRID = 64;

/**
 * The zooms whose cluster grid the writes keep in twin_tile_cells (migration TwinTileCells:
 * `generate_series(0, 12)`). Deeper tiles are small enough to count live.
 */
const CELL_ZOOMS = 12;

/**
 * From this zoom on, a tile the grid shows to hold few twins for its lone ones is counted live (see
 * keptOrLive); above it a tile may cover many twins the caller does not see, which a live count reads too.
 */
const LIVE_FROM_ZOOM = 8;

/** From this zoom on every twin is its own point, unless a tile holds more than TILE_MAX_FEATURES (docs/MAPS.md). */
const POINT_ZOOM = 17;

/** twin_tile_cells' `organization_id` of the twins every organization sees. */
const SHARED_SCOPE = `'00000000-0000-0000-0000-000000000000'::uuid`;

/** The filters twin_tile_cells splits every zoom's counts by (its `public` and `supplier` columns). */
const CELL_FILTERS = new Set(['is_public', 'is_supplier']);

/** The zoom whose grid twin_tile_cells also keeps per facet (migration TileGridFacets); tiles up to it sum those cells. */
const FACET_ZOOM = 6;

/** The zoom whose grid gives the TileJSON bounds of the visible twins: cells of 1/2^14 of the world (2.4 km at the equator). */
const BOUNDS_ZOOM = 8;

/** A twins row's place in the world as Web Mercator fractions (the functions of migration TwinTileCells). */
const FRACTIONS = `LATERAL (SELECT tile_fraction_x(ST_X(t.location)) AS fx, tile_fraction_y(ST_Y(t.location)) AS fy) f`;

/** The grid's rows of the classes `is_public` and `is_supplier` keep (its rows alias `c`). */
const cellClasses = (filters: TwinFilterValues): string =>
  (filters.is_public === undefined ? '' : ` AND ${filters.is_public ? '' : 'NOT '}c.public`) +
  (filters.is_supplier === undefined ? '' : ` AND ${filters.is_supplier ? '' : 'NOT '}c.supplier`);

/** The filters given, but for the grid's classes (is_public, is_supplier) and the acting twin. */
const otherFilters = (filters: TwinFilterValues): string[] =>
  Object.entries(filters)
    .filter(([key, value]) => value !== undefined && key !== 'actingTwinId' && !CELL_FILTERS.has(key))
    .map(([key]) => key);

/** Whether twin_tile_cells holds the counts these filters ask for (none, or only the ones it splits by). */
const countedByGrid = (filters: TwinFilterValues): boolean => otherFilters(filters).length === 0;

/**
 * The facet of twin_tile_cells (migration TileGridFacets) that holds the twins of the one filter beside
 * the grid's classes: `organization`, `is_personal=true`, `characteristics` with one value; else undefined.
 */
function facetOf(tenant: Tenant, filters: TwinFilterValues): string | undefined {
  const [other, ...more] = otherFilters(filters);
  if (other === undefined || more.length > 0) return undefined;
  if (other === 'organization') return `o:${filters.organization}`;
  if (other === 'is_personal' && filters.is_personal) return `a:${tenant.account.id}`;
  if (other === 'characteristics' && filters.characteristics!.length === 1) return `c:${filters.characteristics![0]}`;
  return undefined;
}

/**
 * For a filter that excludes a few twins (`is_personal=false`, `is_connection=false`, beside the grid's
 * classes): the filters that select those few, whose cells the grid's are taken from; else undefined.
 */
function complementOf(filters: TwinFilterValues): TwinFilterValues | undefined {
  const [other, ...more] = otherFilters(filters);
  if (more.length > 0 || (other !== 'is_personal' && other !== 'is_connection') || filters[other] !== false) return undefined;
  return { ...filters, [other]: true };
}

/** twin_tile_cells' key without its shard (migration TileGridShards); `keyOf('c')` lists it as `c.organization_id, c.zoom, …`. */
const CELL_KEY = ['facet', 'organization_id', 'zoom', 'x', 'y', 'cell', 'public', 'supplier'];
const keyOf = (alias: string) => CELL_KEY.map((column) => `${alias}.${column}`).join(', ');

const LOCKED = rowShape({ locked: 'boolean' });
/** Shard rows folded, the last shard they came from (null: none), and the keys of the cells emptied (JSON; null: none). */
const FOLD = rowShape({ folded: 'integer', last: 'integer?', emptied: 'text?' });

/** A tile as PostGIS encoded it, or its features as JSON text for encodeTwinsLayer; null when no twin is in it. */
const TILE = rowShape({ tile: typed<Buffer | string | null>() });
/** Web Mercator fractions (float8); null without a twin. */
const EXTENT = rowShape({ west: typed<number | null>(), north: typed<number>(), east: typed<number>(), south: typed<number>() });

/**
 * SQL of the vector tiles: one statement per tile, built by PostGIS (`ST_AsMVT`) and handed over as
 * bytes. A tile holds the twins of its bounds (by tile_fraction_x/y, so each twin is in one tile per
 * zoom) that the caller sees and the filters keep, drawn on its 64 × 64 grid: a cell of one twin is
 * that twin's point, a cell of more one cluster with their exact count at their centre of mass. From
 * POINT_ZOOM on, every twin is its own point while they number at most `maxFeatures`. And the fold
 * that keeps the grid compact (TileGridFold).
 */
@Injectable()
export class TilesRepository {
  /** Whether this PostGIS encodes tiles itself (ST_AsMVT needs protobuf-c, which the embedded one lacks); asked once. */
  private encodesTiles: Promise<boolean> | undefined;

  constructor(private readonly sql: Sql) {}

  private databaseEncodesTiles(): Promise<boolean> {
    this.encodesTiles ??= this.sql.run(`SELECT ST_AsMVT(q, 'probe') FROM (SELECT ST_MakePoint(0, 0) AS geom) q`).then(
      () => true,
      () => false,
    );
    return this.encodesTiles;
  }

  /** The tile's bytes, or undefined when no twin is in it. */
  async tile(tenant: Tenant, tile: Tile, filters: TwinFilterValues, maxFeatures: number): Promise<Buffer | undefined> {
    const inDatabase = await this.databaseEncodesTiles();
    const p = new SqlParams();
    const organization = p.add(tenant.organization.id, '::uuid');
    const x = p.add(tile.x, '::int');
    const y = p.add(tile.y, '::int');
    const scale = p.add(2 ** tile.z, '::float8');

    // The twins of the tile that the caller sees and `selected` keep: one range of tile_key (migration
    // TwinTileKeys), read from the index alone.
    const inTile = (selected: TwinFilterValues, limit = '') => {
      const conditions = [
        't.location IS NOT NULL',
        ...tileKeyRange(tile).map((key, i) => `tile_key(t.location) ${i === 0 ? '>=' : '<'} ${p.add(key, '::bigint')}`),
        visibleTwinSql('t', organization),
        ...twinFilterConditions(p, tenant, selected),
      ].join(' AND ');
      return `SELECT t.id, t.name, t.public, cardinality(t.services) > 0 AS supplier, f.fx, f.fy FROM twins t, ${FRACTIONS} WHERE ${conditions}${limit}`;
    };
    const cellOf = (fraction: string, tileIndex: string) => `(floor(${fraction} * ${scale} * ${CLUSTER_GRID})::int - ${tileIndex} * ${CLUSTER_GRID})`;
    const liveCell = `${cellOf('a.fy', y)} * ${CLUSTER_GRID} + ${cellOf('a.fx', x)}`;
    // Cells summed: (cell, count, sum_x, sum_y, id_high, id_low), a cell of one twin naming it by its
    // id's halves (migration TileGridLoneTwins).
    const kept = (facet: string, classes = cellClasses(filters)) => {
      const scope = `c.facet = ${p.add(facet, '::text')} AND c.organization_id IN (${SHARED_SCOPE}, ${organization})${classes}`;
      if (tile.z > FACET_ZOOM || facet === '') {
        return `SELECT c.cell, sum(c.count)::bigint AS count, sum(c.sum_x) AS sum_x, sum(c.sum_y) AS sum_y, sum(c.id_high) AS id_high, sum(c.id_low) AS id_low
                  FROM twin_tile_cells c WHERE ${scope} AND c.zoom = ${p.add(tile.z, '::smallint')} AND c.x = ${x} AND c.y = ${y} GROUP BY c.cell`;
      }
      // The facet's cells of FACET_ZOOM under this tile, each in the tile's cell that holds it.
      const shift = FACET_ZOOM - tile.z;
      const [fx, fy] = [p.add(tile.x << shift, '::int'), p.add(tile.y << shift, '::int')];
      const span = 1 << shift;
      const cell = `(((c.y * ${CLUSTER_GRID} + c.cell / ${CLUSTER_GRID}) >> ${shift}) - ${y} * ${CLUSTER_GRID}) * ${CLUSTER_GRID} + ((c.x * ${CLUSTER_GRID} + c.cell % ${CLUSTER_GRID}) >> ${shift}) - ${x} * ${CLUSTER_GRID}`;
      return `SELECT ${cell} AS cell, sum(c.count)::bigint AS count, sum(c.sum_x) AS sum_x, sum(c.sum_y) AS sum_y, sum(c.id_high) AS id_high, sum(c.id_low) AS id_low
                FROM twin_tile_cells c
               WHERE ${scope} AND c.zoom = ${FACET_ZOOM} AND c.x >= ${fx} AND c.x < ${fx} + ${span} AND c.y >= ${fy} AND c.y < ${fy} + ${span} GROUP BY 1`;
    };
    const liveSummed = (selected: TwinFilterValues) =>
      `SELECT ${liveCell} AS cell, count(*) AS count, sum(a.fx) AS sum_x, sum(a.fy) AS sum_y,
              sum(twin_id_half(a.id, 0)::numeric) AS id_high, sum(twin_id_half(a.id, 1)::numeric) AS id_low
         FROM (${inTile(selected)}) a GROUP BY 1`;
    // Summed cells to occupied ones: (cell, count, fx, fy, and the id, name, public, supplier of a cell
    // of one twin, read by primary key, with its place).
    const occupied = (summed: string) =>
      `SELECT s.cell, s.count, CASE WHEN t.id IS NULL THEN s.sum_x / s.count ELSE tile_fraction_x(ST_X(t.location)) END AS fx,
              CASE WHEN t.id IS NULL THEN s.sum_y / s.count ELSE tile_fraction_y(ST_Y(t.location)) END AS fy,
              t.id, t.name, t.public, cardinality(t.services) > 0 AS supplier
         FROM (${summed}) s LEFT JOIN twins t ON t.id = CASE WHEN s.count = 1 THEN twin_tile_cells_lone_id(s.id_high, s.id_low) END
        WHERE s.count > 0`;
    // The same counted live, a lone twin's members from the index.
    const live = (selected: TwinFilterValues) =>
      `SELECT ${liveCell} AS cell, count(*) AS count, avg(a.fx) AS fx, avg(a.fy) AS fy,
              min(a.id::text) AS id, min(a.name) AS name, bool_or(a.public) AS public, bool_or(a.supplier) AS supplier
         FROM (${inTile(selected)}) a GROUP BY 1`;

    const pixel = (fraction: string, tileIndex: string) => `round((${fraction} * ${scale} - ${tileIndex}) * ${TILE_EXTENT})`;
    // The layer of the features `rows` selects (a point `geom`, the rest properties; null ones are left
    // out): encoded by PostGIS, or as JSON text for encodeTwinsLayer.
    const mvt = (rows: string) => (inDatabase ? `(SELECT ST_AsMVT(m, 'twins', ${TILE_EXTENT}, 'geom') FROM (${rows}) m)` : `(SELECT json_agg(m)::text FROM (${rows}) m)`);
    // The grid rule: a feature per occupied cell, in cell order: its lone twin at its place, or a
    // cluster of its count at their centre of mass.
    const drawn = (cells: string) => {
      const lone = (value: string) => `CASE WHEN c.count = 1 THEN ${value} END`;
      return mvt(`SELECT ST_MakePoint(${pixel('c.fx', x)}, ${pixel('c.fy', y)}) AS geom,
                         ${lone('c.id::text')} AS id, ${lone('c.name')} AS name, ${lone('c.public')} AS public, ${lone('c.supplier')} AS supplier,
                         CASE WHEN c.count > 1 THEN c.count END AS count, CASE WHEN c.count > 1 THEN true END AS cluster
                    FROM (${cells}) c ORDER BY c.cell`);
    };
    // The kept grid's cells `summed`, or, where the grid shows the tile's twins are few and spread (a
    // city's tile at zoom 10–12: thousands of cells of one, each a read by primary key), the same counted
    // live from the index: reading a twin there costs about a tenth of reading one by its id.
    const keptOrLive = (summed: string) =>
      tile.z < LIVE_FROM_ZOOM
        ? `SELECT ${drawn(occupied(summed))} AS tile`
        : `WITH g AS MATERIALIZED (${summed}),
            shape AS (SELECT coalesce(sum(g.count), 0) AS twins, count(*) FILTER (WHERE g.count = 1) AS lone FROM g WHERE g.count > 0)
       SELECT CASE WHEN (SELECT twins FROM shape) > 10 * (SELECT lone FROM shape) THEN ${drawn(occupied('SELECT * FROM g'))}
                   ELSE ${drawn(live(filters))} END AS tile`;
    // Every twin its own point.
    const points = (twins: string) =>
      mvt(`SELECT ST_MakePoint(${pixel('a.fx', x)}, ${pixel('a.fy', y)}) AS geom, a.id::text AS id, a.name, a.public, a.supplier FROM ${twins} a ORDER BY a.id`);

    const facet = facetOf(tenant, filters);
    const complement = complementOf(filters);
    let sql: string;
    let plannedPerCall = true;
    if (tile.z <= CELL_ZOOMS && countedByGrid(filters)) {
      // The grid the writes keep: its rows for this tile, the shared twins' and the caller's own, summed
      // over shards (a cell's unfolded deltas may cancel its folded count: then it is empty).
      sql = keptOrLive(kept(''));
      plannedPerCall = false;
    } else if (tile.z <= FACET_ZOOM && facet !== undefined) {
      sql = `SELECT ${drawn(occupied(kept(facet)))} AS tile`;
    } else if (tile.z <= CELL_ZOOMS && complement !== undefined) {
      // The grid less the few twins the filter leaves out (their facet up to FACET_ZOOM, else counted live).
      const excluded = complement.is_personal && tile.z <= FACET_ZOOM ? kept(facetOf(tenant, complement)!) : liveSummed(complement);
      sql = keptOrLive(`SELECT g.cell, g.count - coalesce(e.count, 0) AS count, g.sum_x - coalesce(e.sum_x, 0) AS sum_x, g.sum_y - coalesce(e.sum_y, 0) AS sum_y,
                               g.id_high - coalesce(e.id_high, 0) AS id_high, g.id_low - coalesce(e.id_low, 0) AS id_low
                          FROM (${kept('')}) g LEFT JOIN (${excluded}) e ON e.cell = g.cell`);
    } else if (tile.z < POINT_ZOOM) {
      sql = `SELECT ${drawn(live(filters))} AS tile`;
      plannedPerCall = !countedByGrid(filters);
    } else {
      // Every twin a point, unless more than a tile holds: then the grid rule again. Up to one twin more
      // than that tells which.
      const max = p.add(maxFeatures, '::bigint');
      sql = `WITH matching AS MATERIALIZED (${inTile(filters, ` LIMIT ${max} + 1`)}),
             total AS (SELECT count(*) AS n FROM matching)
             SELECT CASE WHEN (SELECT n FROM total) > ${max} THEN ${drawn(live(filters))}
                         WHEN (SELECT n FROM total) > 0 THEN ${points('matching')}
                    END AS tile`;
      plannedPerCall = !countedByGrid(filters);
    }
    // Filtered live tiles are planned with their values (no generic plan: the twins a filter keeps in a
    // tile range from none to most). Tiles tolerate a replica's lag (DATABASE_REPLICA_URLS): a map is
    // not where a client checks its own write.
    const answer = (await this.sql.replicaOne(TILE, plannedPerCall ? oneOffSql(sql) : sql, p.values)).tile;
    if (answer == null || answer.length === 0) return undefined;
    return typeof answer === 'string' ? encodeTwinsLayer(JSON.parse(answer) as FeatureRow[], TILE_EXTENT) : answer;
  }

  /**
   * The extent of the visible twins the filters keep, as Web Mercator fractions (west, north, east,
   * south: min x, min y, max x, max y), or undefined when there is none. From the grid at BOUNDS_ZOOM
   * (outward to its cells) when the filters allow, else live.
   */
  async extent(tenant: Tenant, filters: TwinFilterValues): Promise<[number, number, number, number] | undefined> {
    const p = new SqlParams();
    const organization = p.add(tenant.organization.id, '::uuid');
    let sql: string;
    if (countedByGrid(filters)) {
      const cells = 2 ** BOUNDS_ZOOM * CLUSTER_GRID;
      const column = `(c.x * ${CLUSTER_GRID} + c.cell % ${CLUSTER_GRID})`;
      const row = `(c.y * ${CLUSTER_GRID} + c.cell / ${CLUSTER_GRID})`;
      // The cells holding a twin. A cell only in shard 0 does (the fold deletes a cell whose count comes
      // to 0 once no other shard holds it); one with deltas elsewhere does when its shards sum above 0.
      // So: every cell but those, found by two index-only scans of the primary key (it holds the shard;
      // `IS DISTINCT FROM` keeps the planner off the partial index of every unfolded row).
      const scope = `c.facet = '' AND c.organization_id IN (${SHARED_SCOPE}, ${organization}) AND c.zoom = ${BOUNDS_ZOOM}${cellClasses(filters)}`;
      const key = (alias: string) => `${alias}.facet, ${alias}.organization_id, ${alias}.x, ${alias}.y, ${alias}.cell, ${alias}.public, ${alias}.supplier`;
      sql = `WITH unfolded AS MATERIALIZED (
               SELECT DISTINCT ${key('c')} FROM twin_tile_cells c WHERE ${scope} AND c.shard IS DISTINCT FROM 0),
             emptied AS MATERIALIZED (
               SELECT u.* FROM unfolded u
                WHERE (SELECT sum(o.count) FROM twin_tile_cells o
                        WHERE (${keyOf('o')}) = (u.facet, u.organization_id, ${BOUNDS_ZOOM}, u.x, u.y, u.cell, u.public, u.supplier)) <= 0)
             SELECT min(${column})::float8 / ${cells} AS west, min(${row})::float8 / ${cells} AS north,
                    (max(${column}) + 1)::float8 / ${cells} AS east, (max(${row}) + 1)::float8 / ${cells} AS south
               FROM twin_tile_cells c
              WHERE ${scope} AND NOT EXISTS (SELECT FROM emptied e WHERE (${key('e')}) = (${key('c')}))`;
    } else {
      const conditions = ['t.location IS NOT NULL', 'f.fy >= 0', 'f.fy < 1', visibleTwinSql('t', organization), ...twinFilterConditions(p, tenant, filters)].join(' AND ');
      sql = `SELECT min(f.fx) AS west, min(f.fy) AS north, max(f.fx) AS east, max(f.fy) AS south FROM twins t, ${FRACTIONS} WHERE ${conditions}`;
    }
    const extent = await this.sql.replicaOne(EXTENT, sql, p.values);
    return extent.west == null ? undefined : [extent.west, extent.north, extent.east, extent.south];
  }

  /**
   * Takes the grid's fold lock for the caller's transaction (migration TileGridShards: one fold at a
   * time, and none across a TRUNCATE); false when another instance holds it.
   */
  async takeFoldLock(): Promise<boolean> {
    return this.sql.value(LOCKED, `SELECT pg_try_advisory_xact_lock(twin_tile_cells_fold_key()) AS locked`);
  }

  /**
   * Folds up to `batch` rows of the writers' shards, from shard `from` on in shard order (a pass over
   * the shards takes one writer's rows after the other's), into shard 0, in the caller's transaction,
   * under the fold lock; the number of rows folded and the last shard reached. Rows a running writer
   * holds are left for a later batch (SKIP LOCKED): the fold never waits for a writer. A snapshot sees
   * each delta once (its shard's row is deleted by the transaction that adds it to shard 0), so tiles
   * stay exact. Then the cells whose folded count came to 0 go, unless another shard still holds
   * deltas of theirs: deltas fold out of order (a twin's move within a cell before its arrival there),
   * so a count of 0 means no twin, and sums of 0, only once the cell has no deltas left elsewhere
   * (only the fold writes shard 0, and the lock keeps folds apart). That is asked of the primary key
   * (the cell's rows: its own alone), not as "a row of another shard", which the planner answers from
   * the partial index of unfolded rows, all of them, for each cell when its statistics say it is small.
   *
   * The rows are deleted by the place the lock found them at (a TID scan, nothing else: another
   * condition on them lets the planner scan every unfolded row instead): locked, they cannot move; a
   * version newer than the statement's snapshot is not deleted, and waits for the next pass. The
   * batch is a literal: a LIMIT the planner knows.
   */
  async foldShards(batch: number, from: number, settledOnly: boolean): Promise<{ folded: number; last: number }> {
    // A writer's shard ends in the parity of the second its statement began in (migration TileGridShards):
    // the other parity's rows are settled, their writers have moved on to rows the fold leaves alone.
    const settled = settledOnly ? ` AND (u.shard & 1) <> (floor(extract(epoch FROM statement_timestamp()))::bigint % 2)::integer` : '';
    const { folded, last, emptied } = await this.sql.one(
      FOLD,
      `WITH taken AS (
         DELETE FROM twin_tile_cells c
          WHERE c.ctid = ANY (ARRAY(SELECT u.ctid FROM twin_tile_cells u WHERE u.shard <> 0 AND u.shard >= $1::int${settled} ORDER BY u.shard LIMIT ${Math.trunc(batch)} FOR UPDATE SKIP LOCKED))
         RETURNING ${keyOf('c')}, c.shard, c.count, c.sum_x, c.sum_y, c.id_high, c.id_low),
       added AS (
         INSERT INTO twin_tile_cells AS f (${CELL_KEY.join(', ')}, shard, count, sum_x, sum_y, id_high, id_low)
         SELECT ${keyOf('t')}, 0, sum(t.count), sum(t.sum_x), sum(t.sum_y), sum(t.id_high), sum(t.id_low) FROM taken t GROUP BY ${keyOf('t')} ORDER BY ${keyOf('t')}
         ON CONFLICT (${CELL_KEY.join(', ')}, shard) DO UPDATE
           SET count = f.count + EXCLUDED.count, sum_x = f.sum_x + EXCLUDED.sum_x, sum_y = f.sum_y + EXCLUDED.sum_y,
               id_high = f.id_high + EXCLUDED.id_high, id_low = f.id_low + EXCLUDED.id_low
         RETURNING ${keyOf('f')}, f.count)
       SELECT (SELECT count(*)::int FROM taken) AS folded, (SELECT max(shard) FROM taken) AS last,
              (SELECT json_agg(e)::text FROM (SELECT ${keyOf('a')} FROM added a WHERE a.count = 0) e) AS emptied`,
      [from],
    );
    if (emptied !== null) {
      await this.sql.run(
        `DELETE FROM twin_tile_cells c
          USING json_to_recordset($1::json) AS e(facet text, organization_id uuid, zoom smallint, x integer, y integer, cell smallint, public boolean, supplier boolean)
          WHERE (${keyOf('c')}, c.shard) = (${keyOf('e')}, 0) AND c.count = 0
            AND (SELECT count(*) FROM twin_tile_cells o WHERE (${keyOf('o')}) = (${keyOf('c')})) = 1`,
        [emptied],
      );
    }
    return { folded, last: last ?? from };
  }
}
