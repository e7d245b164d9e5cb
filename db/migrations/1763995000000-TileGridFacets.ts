import { MigrationInterface, QueryRunner } from 'typeorm';
import { TileGridLoneTwins1763990000000 } from './1763990000000-TileGridLoneTwins.js';

/**
 * Filtered tiles at low zoom over a million twins: a zoom-0 tile with `characteristics=outdoors` had to
 * read every matching twin's row (50,000 scattered rows: 1–2 s), `is_personal=false` nearly all of them.
 * So the writes also keep the grid of zoom 6 split by the filters a map asks for one at a time, and
 * tiles of zooms 0–6 sum those cells (src/maps/tiles.repository.ts).
 *
 * - `twin_tile_cells.facet`, first in the primary key: `''` for the grid of every zoom 0–12 as before;
 *   at zoom 6 also `o:<organization id>` (the `organization` filter), `a:<owner account id>`
 *   (`is_personal`) and `c:<characteristic>` (`characteristics` with one value), each twin in the facet
 *   of its organization, its owner and each of its characteristics. Same scopes, flags, shards and
 *   fold as the rest of the grid.
 * - The writers hand over each twin's owner and characteristics (as a JSON array: an array of arrays
 *   must be rectangular), and an update whose owner or characteristics changed moves it between facets.
 * - `twins_tile_key_idx` also holds `characteristics` and `owner_account_id`, so the live tiles of every
 *   filter (zoom 7 on) read the index alone.
 * - The grid is rebuilt from the twins, writers locked out meanwhile.
 */
export class TileGridFacets1763995000000 implements MigrationInterface {
  name = 'TileGridFacets1763995000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`LOCK TABLE twins IN SHARE MODE`);
    await db.query(`ALTER TABLE twin_tile_cells ADD COLUMN facet text NOT NULL DEFAULT ''`);
    await db.query(`ALTER TABLE twin_tile_cells DROP CONSTRAINT twin_tile_cells_pkey`);
    await db.query(`DELETE FROM twin_tile_cells`);
    await db.query(`ALTER TABLE twin_tile_cells ADD PRIMARY KEY (facet, organization_id, zoom, x, y, cell, public, supplier, shard)`);
    await db.query(`DROP FUNCTION twin_tile_cells_apply(uuid[], uuid[], boolean[], boolean[], float8[], float8[], int[])`);
    await db.query(`DROP FUNCTION twin_tile_cells_of(uuid, uuid, boolean, boolean, float8, float8, int)`);
    await db.query(`CREATE FUNCTION twin_tile_cells_of(id uuid, organization_id uuid, public boolean, supplier boolean, lon float8, lat float8, sign int, owner uuid, characteristics jsonb)
      RETURNS TABLE (facet text, organization_id uuid, public boolean, supplier boolean, zoom smallint, x integer, y integer, cell smallint, count bigint, sum_x float8, sum_y float8, id_high numeric, id_low numeric)
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT k.facet, CASE WHEN public OR supplier THEN '00000000-0000-0000-0000-000000000000'::uuid ELSE organization_id END,
               public, supplier, z::smallint,
               (f.cx >> (12 - z)) >> 6, (f.cy >> (12 - z)) >> 6, ((((f.cy >> (12 - z)) & 63) << 6) | ((f.cx >> (12 - z)) & 63))::smallint,
               sign::bigint, sign * f.fx, sign * f.fy, sign * f.high, sign * f.low
          FROM (SELECT tile_fraction_x(lon) AS fx, tile_fraction_y(lat) AS fy) p,
               LATERAL (SELECT p.fx, p.fy, floor(p.fx * 262144)::int AS cx, floor(p.fy * 262144)::int AS cy,
                               twin_id_half(id, 0)::numeric AS high, twin_id_half(id, 1)::numeric AS low) f,
               LATERAL (SELECT '' AS facet, z FROM generate_series(0, 12) z
                        UNION ALL SELECT 'o:' || organization_id, 6
                        UNION ALL SELECT 'a:' || owner, 6 WHERE owner IS NOT NULL
                        UNION ALL SELECT DISTINCT 'c:' || c, 6 FROM jsonb_array_elements_text(characteristics) c) k
         WHERE p.fy >= 0 AND p.fy < 1
      $$`);
    await db.query(`CREATE FUNCTION twin_tile_cells_apply(ids uuid[], organization_ids uuid[], publics boolean[], suppliers boolean[], lons float8[], lats float8[], signs int[], owners uuid[], characteristics jsonb[])
      RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO twin_tile_cells AS c (facet, organization_id, public, supplier, zoom, x, y, cell, shard, count, sum_x, sum_y, id_high, id_low)
        SELECT r.facet, r.organization_id, r.public, r.supplier, r.zoom, r.x, r.y, r.cell,
               pg_backend_pid() * 2 + (floor(extract(epoch FROM statement_timestamp()))::bigint % 2)::integer,
               sum(r.count), sum(r.sum_x), sum(r.sum_y), sum(r.id_high), sum(r.id_low)
          FROM unnest(ids, organization_ids, publics, suppliers, lons, lats, signs, owners, characteristics)
                 AS d(id, organization_id, public, supplier, lon, lat, sign, owner, characteristics),
               LATERAL twin_tile_cells_of(d.id, d.organization_id, d.public, d.supplier, d.lon, d.lat, d.sign, d.owner, d.characteristics) r
         GROUP BY r.facet, r.organization_id, r.zoom, r.x, r.y, r.cell, r.public, r.supplier
        HAVING sum(r.count) <> 0 OR sum(r.sum_x) <> 0 OR sum(r.sum_y) <> 0 OR sum(r.id_high) <> 0 OR sum(r.id_low) <> 0
         ORDER BY r.facet, r.organization_id, r.zoom, r.x, r.y, r.cell, r.public, r.supplier
        ON CONFLICT (facet, organization_id, zoom, x, y, cell, public, supplier, shard) DO UPDATE
          SET count = c.count + EXCLUDED.count, sum_x = c.sum_x + EXCLUDED.sum_x, sum_y = c.sum_y + EXCLUDED.sum_y,
              id_high = c.id_high + EXCLUDED.id_high, id_low = c.id_low + EXCLUDED.id_low;
      END $$`);
    const apply = (rows: string) =>
      `PERFORM twin_tile_cells_apply(array_agg(t.id), array_agg(t.organization_id), array_agg(t.public), array_agg(t.supplier), array_agg(t.lon), array_agg(t.lat), array_agg(t.sign),
                                     array_agg(t.owner_account_id), array_agg(to_jsonb(t.characteristics)))
          FROM (${rows}) t HAVING count(*) > 0;`;
    const located = (alias: string, sign: number) =>
      `SELECT ${alias}.id, ${alias}.organization_id, ${alias}.public, cardinality(${alias}.services) > 0 AS supplier, ST_X(${alias}.location) AS lon, ST_Y(${alias}.location) AS lat, ${sign} AS sign,
              ${alias}.owner_account_id, ${alias}.characteristics`;
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
                    WHERE (n.organization_id, n.public, cardinality(n.services) > 0, ST_X(n.location), ST_Y(n.location), n.owner_account_id, n.characteristics)
                          IS DISTINCT FROM (o.organization_id, o.public, cardinality(o.services) > 0, ST_X(o.location), ST_Y(o.location), o.owner_account_id, o.characteristics))
                 ${located('n', 1)} FROM new_rows n WHERE n.location IS NOT NULL AND n.id IN (SELECT id FROM moved)
                 UNION ALL
                 ${located('o', -1)} FROM old_rows o WHERE o.location IS NOT NULL AND o.id IN (SELECT id FROM moved)`)}
        RETURN NULL;
      END $$`);
    await db.query(`
      INSERT INTO twin_tile_cells (facet, organization_id, public, supplier, zoom, x, y, cell, shard, count, sum_x, sum_y, id_high, id_low)
      SELECT r.facet, r.organization_id, r.public, r.supplier, r.zoom, r.x, r.y, r.cell, 0, sum(r.count), sum(r.sum_x), sum(r.sum_y), sum(r.id_high), sum(r.id_low)
        FROM twins t,
             LATERAL twin_tile_cells_of(t.id, t.organization_id, t.public, cardinality(t.services) > 0, ST_X(t.location), ST_Y(t.location), 1, t.owner_account_id, to_jsonb(t.characteristics)) r
       WHERE t.location IS NOT NULL
       GROUP BY r.facet, r.organization_id, r.zoom, r.x, r.y, r.cell, r.public, r.supplier`);
    await db.query(`DROP INDEX twins_tile_key_idx`);
    await db.query(
      `CREATE INDEX twins_tile_key_idx ON twins (tile_key(location)) INCLUDE (location, id, name, public, services, organization_id, owner_account_id, characteristics) WHERE location IS NOT NULL`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`LOCK TABLE twins IN SHARE MODE`);
    await db.query(`DROP INDEX twins_tile_key_idx`);
    await db.query(`CREATE INDEX twins_tile_key_idx ON twins (tile_key(location)) INCLUDE (location, id, name, public, services, organization_id) WHERE location IS NOT NULL`);
    await db.query(`DROP FUNCTION twin_tile_cells_apply(uuid[], uuid[], boolean[], boolean[], float8[], float8[], int[], uuid[], jsonb[])`);
    await db.query(`DROP FUNCTION twin_tile_cells_of(uuid, uuid, boolean, boolean, float8, float8, int, uuid, jsonb)`);
    await db.query(`DELETE FROM twin_tile_cells WHERE facet <> ''`);
    await db.query(`ALTER TABLE twin_tile_cells DROP CONSTRAINT twin_tile_cells_pkey`);
    await db.query(`ALTER TABLE twin_tile_cells DROP COLUMN facet`);
    await db.query(`ALTER TABLE twin_tile_cells ADD PRIMARY KEY (organization_id, zoom, x, y, cell, public, supplier, shard)`);
    // The functions and triggers of migration TileGridLoneTwins, as it wrote them.
    await new TileGridLoneTwins1763990000000().functions(db);
  }
}
