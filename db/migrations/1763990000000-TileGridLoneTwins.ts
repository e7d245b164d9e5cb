import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tiles are drawn on the 64 × 64 grid at every zoom (docs/MAPS.md): a cell holding one twin shows that
 * twin as a point, with its id and name. So the kept grid tells which twin a cell of one holds.
 *
 * - `twin_tile_cells.id_high` / `id_low`: the sums, over the cell's twins, of the two halves of their ids
 *   read as signed 64-bit integers. Like the count and the coordinate sums they are signed deltas summed
 *   over shards; where a cell's count sums to 1 they are the halves of its one twin's id
 *   (`twin_tile_cells_lone_id`), which the tile then reads by primary key for its name and flags.
 *   `numeric`, so a zoom-0 cell's sum of a million ids cannot overflow.
 * - The writers' functions take the ids; the fold sums them with the rest.
 * - The grid is rebuilt from the twins, writers locked out meanwhile (as migration TwinTileCells built it).
 */
export class TileGridLoneTwins1763990000000 implements MigrationInterface {
  name = 'TileGridLoneTwins1763990000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`LOCK TABLE twins IN SHARE MODE`);
    await db.query(`ALTER TABLE twin_tile_cells ADD COLUMN id_high numeric NOT NULL DEFAULT 0, ADD COLUMN id_low numeric NOT NULL DEFAULT 0`);
    await db.query(`CREATE FUNCTION twin_id_half(id uuid, half int) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      RETURN ('x' || substr(replace(id::text, '-', ''), half * 16 + 1, 16))::bit(64)::bigint`);
    await db.query(`CREATE FUNCTION twin_tile_cells_lone_id(id_high numeric, id_low numeric) RETURNS uuid LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      RETURN (lpad(to_hex(id_high::bigint), 16, '0') || lpad(to_hex(id_low::bigint), 16, '0'))::uuid`);
    await db.query(`DROP FUNCTION twin_tile_cells_apply(uuid[], boolean[], boolean[], float8[], float8[], int[])`);
    await db.query(`DROP FUNCTION twin_tile_cells_of(uuid, boolean, boolean, float8, float8, int)`);
    await this.functions(db);
    await db.query(`DELETE FROM twin_tile_cells`);
    await db.query(`
      INSERT INTO twin_tile_cells (organization_id, public, supplier, zoom, x, y, cell, shard, count, sum_x, sum_y, id_high, id_low)
      SELECT r.organization_id, r.public, r.supplier, r.zoom, r.x, r.y, r.cell, 0, sum(r.count), sum(r.sum_x), sum(r.sum_y), sum(r.id_high), sum(r.id_low)
        FROM twins t, LATERAL twin_tile_cells_of(t.id, t.organization_id, t.public, cardinality(t.services) > 0, ST_X(t.location), ST_Y(t.location), 1) r
       WHERE t.location IS NOT NULL
       GROUP BY r.organization_id, r.zoom, r.x, r.y, r.cell, r.public, r.supplier`);
  }

  /** The writers' functions and triggers of this migration (migration TileGridFacets' down puts them back). */
  async functions(db: QueryRunner): Promise<void> {
    await db.query(`CREATE FUNCTION twin_tile_cells_of(id uuid, organization_id uuid, public boolean, supplier boolean, lon float8, lat float8, sign int)
      RETURNS TABLE (organization_id uuid, public boolean, supplier boolean, zoom smallint, x integer, y integer, cell smallint, count bigint, sum_x float8, sum_y float8, id_high numeric, id_low numeric)
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE WHEN public OR supplier THEN '00000000-0000-0000-0000-000000000000'::uuid ELSE organization_id END,
               public, supplier, z::smallint,
               (f.cx >> (12 - z)) >> 6, (f.cy >> (12 - z)) >> 6, ((((f.cy >> (12 - z)) & 63) << 6) | ((f.cx >> (12 - z)) & 63))::smallint,
               sign::bigint, sign * f.fx, sign * f.fy, sign * f.high, sign * f.low
          FROM (SELECT tile_fraction_x(lon) AS fx, tile_fraction_y(lat) AS fy) p,
               LATERAL (SELECT p.fx, p.fy, floor(p.fx * 262144)::int AS cx, floor(p.fy * 262144)::int AS cy,
                               twin_id_half(id, 0)::numeric AS high, twin_id_half(id, 1)::numeric AS low) f,
               generate_series(0, 12) z
         WHERE p.fy >= 0 AND p.fy < 1
      $$`);
    await db.query(`CREATE FUNCTION twin_tile_cells_apply(ids uuid[], organization_ids uuid[], publics boolean[], suppliers boolean[], lons float8[], lats float8[], signs int[])
      RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO twin_tile_cells AS c (organization_id, public, supplier, zoom, x, y, cell, shard, count, sum_x, sum_y, id_high, id_low)
        SELECT r.organization_id, r.public, r.supplier, r.zoom, r.x, r.y, r.cell,
               pg_backend_pid() * 2 + (floor(extract(epoch FROM statement_timestamp()))::bigint % 2)::integer,
               sum(r.count), sum(r.sum_x), sum(r.sum_y), sum(r.id_high), sum(r.id_low)
          FROM unnest(ids, organization_ids, publics, suppliers, lons, lats, signs) AS d(id, organization_id, public, supplier, lon, lat, sign),
               LATERAL twin_tile_cells_of(d.id, d.organization_id, d.public, d.supplier, d.lon, d.lat, d.sign) r
         GROUP BY r.organization_id, r.zoom, r.x, r.y, r.cell, r.public, r.supplier
        HAVING sum(r.count) <> 0 OR sum(r.sum_x) <> 0 OR sum(r.sum_y) <> 0 OR sum(r.id_high) <> 0 OR sum(r.id_low) <> 0
         ORDER BY r.organization_id, r.zoom, r.x, r.y, r.cell, r.public, r.supplier
        ON CONFLICT (organization_id, zoom, x, y, cell, public, supplier, shard) DO UPDATE
          SET count = c.count + EXCLUDED.count, sum_x = c.sum_x + EXCLUDED.sum_x, sum_y = c.sum_y + EXCLUDED.sum_y,
              id_high = c.id_high + EXCLUDED.id_high, id_low = c.id_low + EXCLUDED.id_low;
      END $$`);
    await this.triggers(db, true);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`LOCK TABLE twins IN SHARE MODE`);
    await db.query(`DROP FUNCTION twin_tile_cells_apply(uuid[], uuid[], boolean[], boolean[], float8[], float8[], int[])`);
    await db.query(`DROP FUNCTION twin_tile_cells_of(uuid, uuid, boolean, boolean, float8, float8, int)`);
    await db.query(`CREATE FUNCTION twin_tile_cells_of(organization_id uuid, public boolean, supplier boolean, lon float8, lat float8, sign int)
      RETURNS TABLE (organization_id uuid, public boolean, supplier boolean, zoom smallint, x integer, y integer, cell smallint, count bigint, sum_x float8, sum_y float8)
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE WHEN public OR supplier THEN '00000000-0000-0000-0000-000000000000'::uuid ELSE organization_id END,
               public, supplier, z::smallint,
               (f.cx >> (12 - z)) >> 6, (f.cy >> (12 - z)) >> 6, ((((f.cy >> (12 - z)) & 63) << 6) | ((f.cx >> (12 - z)) & 63))::smallint,
               sign::bigint, sign * f.fx, sign * f.fy
          FROM (SELECT tile_fraction_x(lon) AS fx, tile_fraction_y(lat) AS fy) p,
               LATERAL (SELECT p.fx, p.fy, floor(p.fx * 262144)::int AS cx, floor(p.fy * 262144)::int AS cy) f,
               generate_series(0, 12) z
         WHERE p.fy >= 0 AND p.fy < 1
      $$`);
    await db.query(`CREATE FUNCTION twin_tile_cells_apply(organization_ids uuid[], publics boolean[], suppliers boolean[], lons float8[], lats float8[], signs int[])
      RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO twin_tile_cells AS c (organization_id, public, supplier, zoom, x, y, cell, shard, count, sum_x, sum_y)
        SELECT r.organization_id, r.public, r.supplier, r.zoom, r.x, r.y, r.cell,
               pg_backend_pid() * 2 + (floor(extract(epoch FROM statement_timestamp()))::bigint % 2)::integer, sum(r.count), sum(r.sum_x), sum(r.sum_y)
          FROM unnest(organization_ids, publics, suppliers, lons, lats, signs) AS d(organization_id, public, supplier, lon, lat, sign),
               LATERAL twin_tile_cells_of(d.organization_id, d.public, d.supplier, d.lon, d.lat, d.sign) r
         GROUP BY r.organization_id, r.zoom, r.x, r.y, r.cell, r.public, r.supplier
        HAVING sum(r.count) <> 0 OR sum(r.sum_x) <> 0 OR sum(r.sum_y) <> 0
         ORDER BY r.organization_id, r.zoom, r.x, r.y, r.cell, r.public, r.supplier
        ON CONFLICT (organization_id, zoom, x, y, cell, public, supplier, shard) DO UPDATE
          SET count = c.count + EXCLUDED.count, sum_x = c.sum_x + EXCLUDED.sum_x, sum_y = c.sum_y + EXCLUDED.sum_y;
      END $$`);
    await this.triggers(db, false);
    await db.query(`DROP FUNCTION twin_tile_cells_lone_id(numeric, numeric)`);
    await db.query(`DROP FUNCTION twin_id_half(uuid, int)`);
    await db.query(`ALTER TABLE twin_tile_cells DROP COLUMN id_high, DROP COLUMN id_low`);
  }

  /** The three trigger functions of migration TwinTileCells, handing over the twins' ids (`withIds`) or not. */
  private async triggers(db: QueryRunner, withIds: boolean): Promise<void> {
    const apply = (rows: string) =>
      `PERFORM twin_tile_cells_apply(${withIds ? 'array_agg(t.id), ' : ''}array_agg(t.organization_id), array_agg(t.public), array_agg(t.supplier), array_agg(t.lon), array_agg(t.lat), array_agg(t.sign))
          FROM (${rows}) t HAVING count(*) > 0;`;
    const located = (alias: string, sign: number) =>
      `SELECT ${alias}.id, ${alias}.organization_id, ${alias}.public, cardinality(${alias}.services) > 0 AS supplier, ST_X(${alias}.location) AS lon, ST_Y(${alias}.location) AS lat, ${sign} AS sign`;
    await db.query(`CREATE OR REPLACE FUNCTION twin_tile_cells_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${apply(`${located('n', 1)} FROM new_rows n WHERE n.location IS NOT NULL`)}
        RETURN NULL;
      END $$`);
    await db.query(`CREATE OR REPLACE FUNCTION twin_tile_cells_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${apply(`${located('o', -1)} FROM old_rows o WHERE o.location IS NOT NULL`)}
        RETURN NULL;
      END $$`);
    await db.query(`CREATE OR REPLACE FUNCTION twin_tile_cells_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${apply(`WITH moved AS (
                   SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id
                    WHERE (n.organization_id, n.public, cardinality(n.services) > 0, ST_X(n.location), ST_Y(n.location))
                          IS DISTINCT FROM (o.organization_id, o.public, cardinality(o.services) > 0, ST_X(o.location), ST_Y(o.location)))
                 ${located('n', 1)} FROM new_rows n WHERE n.location IS NOT NULL AND n.id IN (SELECT id FROM moved)
                 UNION ALL
                 ${located('o', -1)} FROM old_rows o WHERE o.location IS NOT NULL AND o.id IN (SELECT id FROM moved)`)}
        RETURN NULL;
      END $$`);
  }
}
