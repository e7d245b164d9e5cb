import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Vector tiles at low zoom over a million twins (issue 17): a tile at zoom 0 covers every twin, and an
 * exact cluster grid of it cannot be a live `GROUP BY` within 50 ms. So the writes keep the grid.
 *
 * - `tile_fraction_x/y`: a location as fractions of the Web Mercator world (0..1, west to east and
 *   north to south). Twins are placed in tiles and cells by these two functions only, here and in the
 *   tile queries, so a twin is in exactly one tile per zoom and the counts of the grid are the counts
 *   of the live queries. Locations beyond ±85.0511° (outside Web Mercator) fall outside 0..1: in no
 *   tile. Longitude 180 is in the easternmost tiles, as a bounding box test would put it; latitudes
 *   within 1e-12° of the equator are on it (PostgreSQL refuses the underflow of their tangent).
 * - `twin_tile_cells`: for each zoom 0–12 (CELL_ZOOMS in src/maps/tiles.repository.ts), each tile and each cell of its 64 × 64
 *   cluster grid, the number of located twins there and the sums of their fractions (their centre of
 *   mass), split by who sees them: `organization_id` is the nil uuid for twins every organization sees
 *   (public or supplier), else the organization whose own twins they are; `public` and `supplier` split
 *   them further so those two filters are answered here too. Rows of one organization and tile are
 *   one index range.
 * - Statement-level triggers keep it in the writing transaction, like twin_counts: a tile read in
 *   a snapshot counts exactly what that snapshot holds. Rows are changed in key order, so concurrent
 *   writers queue on a cell rather than deadlock; a cell whose count reaches 0 is removed.
 */
export class TwinTileCells1763830000000 implements MigrationInterface {
  name = 'TwinTileCells1763830000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE FUNCTION tile_fraction_x(lon float8) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
      RETURN least(greatest((lon + 180) / 360, 0), 0.9999999999999999)`);
    await db.query(`CREATE FUNCTION tile_fraction_y(lat float8) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
      RETURN CASE WHEN abs(lat) < 1e-12 THEN 0.5
                  WHEN abs(lat) < 90 THEN (1 - ln(tan(radians(lat)) + 1 / cos(radians(lat))) / pi()) / 2
                  WHEN lat > 0 THEN '-Infinity'::float8 ELSE 'Infinity'::float8 END`);
    await db.query(`
      CREATE TABLE twin_tile_cells (
        organization_id  uuid NOT NULL,
        public           boolean NOT NULL,
        supplier         boolean NOT NULL,
        zoom             smallint NOT NULL,
        x                integer NOT NULL,
        y                integer NOT NULL,
        cell             smallint NOT NULL,
        count            bigint NOT NULL,
        sum_x            float8 NOT NULL,
        sum_y            float8 NOT NULL,
        PRIMARY KEY (organization_id, zoom, x, y, cell, public, supplier)
      )`);
    // A located twin's rows of every zoom (signed: +1 where it comes, -1 where it leaves): the cell
    // coordinates of the finest grid (zoom 12's cells, 2^(12 + 6) a side) shifted down to zoom z's (2^(z + 6)).
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
    // Adds signed twins (parallel arrays) to the grid in key order, then drops the cells they emptied.
    await db.query(`CREATE FUNCTION twin_tile_cells_apply(organization_ids uuid[], publics boolean[], suppliers boolean[], lons float8[], lats float8[], signs int[])
      RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO twin_tile_cells AS c (organization_id, public, supplier, zoom, x, y, cell, count, sum_x, sum_y)
        SELECT r.organization_id, r.public, r.supplier, r.zoom, r.x, r.y, r.cell, sum(r.count), sum(r.sum_x), sum(r.sum_y)
          FROM unnest(organization_ids, publics, suppliers, lons, lats, signs) AS d(organization_id, public, supplier, lon, lat, sign),
               LATERAL twin_tile_cells_of(d.organization_id, d.public, d.supplier, d.lon, d.lat, d.sign) r
         GROUP BY r.organization_id, r.zoom, r.x, r.y, r.cell, r.public, r.supplier
        HAVING sum(r.count) <> 0 OR sum(r.sum_x) <> 0 OR sum(r.sum_y) <> 0
         ORDER BY r.organization_id, r.zoom, r.x, r.y, r.cell, r.public, r.supplier
        ON CONFLICT (organization_id, zoom, x, y, cell, public, supplier) DO UPDATE
          SET count = c.count + EXCLUDED.count, sum_x = c.sum_x + EXCLUDED.sum_x, sum_y = c.sum_y + EXCLUDED.sum_y;
        IF -1 = ANY (signs) THEN
          DELETE FROM twin_tile_cells c
           USING unnest(organization_ids, publics, suppliers, lons, lats, signs) AS d(organization_id, public, supplier, lon, lat, sign),
                 LATERAL twin_tile_cells_of(d.organization_id, d.public, d.supplier, d.lon, d.lat, d.sign) r
           WHERE d.sign = -1 AND c.count = 0
             AND (c.organization_id, c.zoom, c.x, c.y, c.cell, c.public, c.supplier) = (r.organization_id, r.zoom, r.x, r.y, r.cell, r.public, r.supplier);
        END IF;
      END $$`);
    // Each trigger hands over its located rows, +1 for the new, -1 for the old.
    const apply = (rows: string) => `PERFORM twin_tile_cells_apply(array_agg(t.organization_id), array_agg(t.public), array_agg(t.supplier), array_agg(t.lon), array_agg(t.lat), array_agg(t.sign))
          FROM (${rows}) t HAVING count(*) > 0;`;
    const located = (alias: string, sign: number) =>
      `SELECT ${alias}.organization_id, ${alias}.public, cardinality(${alias}.services) > 0 AS supplier, ST_X(${alias}.location) AS lon, ST_Y(${alias}.location) AS lat, ${sign} AS sign`;
    await db.query(`CREATE FUNCTION twin_tile_cells_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${apply(`${located('n', 1)} FROM new_rows n WHERE n.location IS NOT NULL`)}
        RETURN NULL;
      END $$`);
    await db.query(`CREATE FUNCTION twin_tile_cells_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${apply(`${located('o', -1)} FROM old_rows o WHERE o.location IS NOT NULL`)}
        RETURN NULL;
      END $$`);
    // Only the rows whose place in the grid changed: most updates (a name, tasks_supplied) touch none.
    await db.query(`CREATE FUNCTION twin_tile_cells_update() RETURNS trigger LANGUAGE plpgsql AS $$
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
    await db.query(`CREATE FUNCTION twin_tile_cells_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM twin_tile_cells;
        RETURN NULL;
      END $$`);
    await db.query(`CREATE TRIGGER twin_tile_cells_insert AFTER INSERT ON twins REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION twin_tile_cells_insert()`);
    await db.query(`CREATE TRIGGER twin_tile_cells_delete AFTER DELETE ON twins REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION twin_tile_cells_delete()`);
    await db.query(
      `CREATE TRIGGER twin_tile_cells_update AFTER UPDATE ON twins REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION twin_tile_cells_update()`,
    );
    await db.query(`CREATE TRIGGER twin_tile_cells_truncate AFTER TRUNCATE ON twins FOR EACH STATEMENT EXECUTE FUNCTION twin_tile_cells_truncate()`);
    // Lock out writers while the grid is first built, so no twin is missed or counted twice.
    await db.query(`LOCK TABLE twins IN SHARE MODE`);
    await db.query(`
      INSERT INTO twin_tile_cells (organization_id, public, supplier, zoom, x, y, cell, count, sum_x, sum_y)
      SELECT r.organization_id, r.public, r.supplier, r.zoom, r.x, r.y, r.cell, sum(r.count), sum(r.sum_x), sum(r.sum_y)
        FROM twins t, LATERAL twin_tile_cells_of(t.organization_id, t.public, cardinality(t.services) > 0, ST_X(t.location), ST_Y(t.location), 1) r
       WHERE t.location IS NOT NULL
       GROUP BY r.organization_id, r.zoom, r.x, r.y, r.cell, r.public, r.supplier`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER twin_tile_cells_truncate ON twins`);
    await db.query(`DROP TRIGGER twin_tile_cells_update ON twins`);
    await db.query(`DROP TRIGGER twin_tile_cells_delete ON twins`);
    await db.query(`DROP TRIGGER twin_tile_cells_insert ON twins`);
    await db.query(`DROP FUNCTION twin_tile_cells_truncate()`);
    await db.query(`DROP FUNCTION twin_tile_cells_update()`);
    await db.query(`DROP FUNCTION twin_tile_cells_delete()`);
    await db.query(`DROP FUNCTION twin_tile_cells_insert()`);
    await db.query(`DROP FUNCTION twin_tile_cells_apply(uuid[], boolean[], boolean[], float8[], float8[], int[])`);
    await db.query(`DROP FUNCTION twin_tile_cells_of(uuid, boolean, boolean, float8, float8, int)`);
    await db.query(`DROP TABLE twin_tile_cells`);
    await db.query(`DROP FUNCTION tile_fraction_y(float8)`);
    await db.query(`DROP FUNCTION tile_fraction_x(float8)`);
  }
}
