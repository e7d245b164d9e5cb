import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The twins of one tile in one index range (issue 17): a points tile of a dense city read its ~4,000
 * twins from ~4,000 heap pages (the rows are wide, in import order), 0.2 s cold and the p99 of zooms
 * 11–12 under load. `tile_key(location)` is the location's Z-order (Morton) code at 2^31 cells a side:
 * every tile, at every zoom, is one contiguous range of keys, `[k << 2(31 - z), (k + 1) << 2(31 - z))`
 * with `k` the tile's own code. The index covers what a tile shows and the visibility rule needs, so
 * a tile is an index-only range scan. Its cells are the fractions' of migration TwinTileCells scaled
 * by a power of two, so a twin's tile by key is its tile by fraction, and the counts agree.
 */
export class TwinTileKeys1763840000000 implements MigrationInterface {
  name = 'TwinTileKeys1763840000000';

  async up(db: QueryRunner): Promise<void> {
    // The 31 low bits of v spread to the even bits of a 62-bit code (the classic mask sequence).
    await db.query(`CREATE FUNCTION morton_spread(v bigint) RETURNS bigint LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
      BEGIN
        v := v & 2147483647;
        v := (v | (v << 16)) & 281470681808895;
        v := (v | (v << 8)) & 71777214294589695;
        v := (v | (v << 4)) & 1085102592571150095;
        v := (v | (v << 2)) & 3689348814741910323;
        RETURN (v | (v << 1)) & 6148914691236517205;
      END $$`);
    // NULL where no tile holds the location (beyond Web Mercator's ±85.0511°).
    await db.query(`CREATE FUNCTION tile_key(location geometry) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      RETURN CASE WHEN tile_fraction_y(ST_Y(location)) >= 0 AND tile_fraction_y(ST_Y(location)) < 1
                  THEN morton_spread(floor(tile_fraction_x(ST_X(location)) * 2147483648)::bigint)
                       | (morton_spread(floor(tile_fraction_y(ST_Y(location)) * 2147483648)::bigint) << 1) END`);
    await db.query(
      `CREATE INDEX twins_tile_key_idx ON twins (tile_key(location)) INCLUDE (location, id, name, public, services, organization_id) WHERE location IS NOT NULL`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX twins_tile_key_idx`);
    await db.query(`DROP FUNCTION tile_key(geometry)`);
    await db.query(`DROP FUNCTION morton_spread(bigint)`);
  }
}
