import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Concurrent moves of distinct twins no longer queue on the cluster grid's shared rows. Every located
 * write upserts its twins' cells of zooms 0–12 (migration TwinTileCells); the low zooms' cells are the
 * same rows for every twin of a scope, and each writer held their row locks until it committed.
 *
 * - `twin_tile_cells.shard`, last in the primary key: the writers add their deltas to the rows of shard
 *   `pg_backend_pid() * 2 + <the parity of the second the client's statement began in>`. No two
 *   running backends share a pid, so two concurrent transactions never write the same grid row. A
 *   shard's row may hold a zero or negative count (a twin that left a cell counted in another shard);
 *   the grid is the sum over shards, and the readers (src/maps/tiles.repository.ts) sum per cell and
 *   drop the cells that sum to 0.
 * - Shard 0 is the folded grid. The fold (src/maps/tile-grid-fold.ts) deletes, in one transaction,
 *   shard rows that no running writer holds (SKIP LOCKED) and adds their sums into shard 0: a snapshot
 *   sees each delta once, in its shard's row or folded, so a tile read in any snapshot stays exact.
 *   It takes the rows of the other second's parity, which the writers have left (but for a statement
 *   begun in the last second), so a writer seldom finds a row of its own held by the fold.
 *   Only the fold writes shard 0, under the advisory lock `twin_tile_cells_fold_key()`; TRUNCATE takes
 *   it too, so no fold running across it writes back what it emptied.
 * - `twin_tile_cells_unfolded`: the rows the fold looks for.
 * - The writers change their rows in key order still (one shard per writer), and no longer delete
 *   cells: the fold drops those whose folded count reached 0 and that no other shard holds.
 *
 * Adding the column is a catalog change; the primary key is rebuilt, with the grid locked meanwhile.
 */
export class TileGridShards1763950000000 implements MigrationInterface {
  name = 'TileGridShards1763950000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE twin_tile_cells ADD COLUMN shard integer NOT NULL DEFAULT 0`);
    await db.query(`ALTER TABLE twin_tile_cells DROP CONSTRAINT twin_tile_cells_pkey`);
    await db.query(`ALTER TABLE twin_tile_cells ADD PRIMARY KEY (organization_id, zoom, x, y, cell, public, supplier, shard)`);
    await db.query(`CREATE INDEX twin_tile_cells_unfolded ON twin_tile_cells (shard) WHERE shard <> 0`);
    await db.query(`CREATE FUNCTION twin_tile_cells_fold_key() RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
      RETURN hashtextextended('twin_tile_cells', 1763950000000)`);
    await db.query(`CREATE OR REPLACE FUNCTION twin_tile_cells_apply(organization_ids uuid[], publics boolean[], suppliers boolean[], lons float8[], lats float8[], signs int[])
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
    await db.query(`CREATE OR REPLACE FUNCTION twin_tile_cells_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(twin_tile_cells_fold_key());
        DELETE FROM twin_tile_cells;
        RETURN NULL;
      END $$`);
  }

  async down(db: QueryRunner): Promise<void> {
    // Writers out, then every shard folded into one row per cell, as the old key wants it.
    await db.query(`LOCK TABLE twins IN SHARE MODE`);
    await db.query(`LOCK TABLE twin_tile_cells IN EXCLUSIVE MODE`);
    await db.query(`
      WITH taken AS (
        DELETE FROM twin_tile_cells WHERE shard <> 0
        RETURNING organization_id, public, supplier, zoom, x, y, cell, count, sum_x, sum_y)
      INSERT INTO twin_tile_cells AS c (organization_id, public, supplier, zoom, x, y, cell, shard, count, sum_x, sum_y)
      SELECT organization_id, public, supplier, zoom, x, y, cell, 0, sum(count), sum(sum_x), sum(sum_y)
        FROM taken GROUP BY organization_id, zoom, x, y, cell, public, supplier
      ON CONFLICT (organization_id, zoom, x, y, cell, public, supplier, shard) DO UPDATE
        SET count = c.count + EXCLUDED.count, sum_x = c.sum_x + EXCLUDED.sum_x, sum_y = c.sum_y + EXCLUDED.sum_y`);
    await db.query(`DELETE FROM twin_tile_cells WHERE count = 0`);
    await db.query(`CREATE OR REPLACE FUNCTION twin_tile_cells_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM twin_tile_cells;
        RETURN NULL;
      END $$`);
    await db.query(`CREATE OR REPLACE FUNCTION twin_tile_cells_apply(organization_ids uuid[], publics boolean[], suppliers boolean[], lons float8[], lats float8[], signs int[])
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
    await db.query(`DROP FUNCTION twin_tile_cells_fold_key()`);
    await db.query(`DROP INDEX twin_tile_cells_unfolded`);
    await db.query(`ALTER TABLE twin_tile_cells DROP CONSTRAINT twin_tile_cells_pkey`);
    await db.query(`ALTER TABLE twin_tile_cells DROP COLUMN shard`);
    await db.query(`ALTER TABLE twin_tile_cells ADD PRIMARY KEY (organization_id, zoom, x, y, cell, public, supplier)`);
  }
}
