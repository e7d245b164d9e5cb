import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A twin a few centimetres from the south pole could not be stored: `tile_fraction_y` (migration
 * TwinTileCells) computes ln(tan φ + sec φ), and near −90° the two terms cancel to 0 (or below), so the
 * logarithm failed and the write answered 500 (latitude −89.9999996, found by the positions property test).
 *
 * Beyond ±85.06° (the Web Mercator square ends at ±85.0511°) it now computes ln(tan(π/4 + φ/2)), the
 * same quantity without the cancellation: finite, and outside [0, 1) as before, so callers that multiply
 * and floor it before keeping only [0, 1) still can. Inside that band the function computes exactly what
 * it did, so no index entry (`twins_tile_key_idx`) nor tile-grid cell of an existing twin changes: beyond
 * it, tile_key was NULL and the grid held no cell, before as after.
 */
export class TileFractionNearPoles1764010000000 implements MigrationInterface {
  name = 'TileFractionNearPoles1764010000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE OR REPLACE FUNCTION tile_fraction_y(lat float8) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
      RETURN CASE WHEN abs(lat) < 1e-12 THEN 0.5
                  WHEN abs(lat) < 85.06 THEN (1 - ln(tan(radians(lat)) + 1 / cos(radians(lat))) / pi()) / 2
                  WHEN abs(lat) < 90 THEN (1 - ln(tan(pi() / 4 + radians(lat) / 2)) / pi()) / 2
                  WHEN lat > 0 THEN '-Infinity'::float8 ELSE 'Infinity'::float8 END`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`CREATE OR REPLACE FUNCTION tile_fraction_y(lat float8) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
      RETURN CASE WHEN abs(lat) < 1e-12 THEN 0.5
                  WHEN abs(lat) < 90 THEN (1 - ln(tan(radians(lat)) + 1 / cos(radians(lat))) / pi()) / 2
                  WHEN lat > 0 THEN '-Infinity'::float8 ELSE 'Infinity'::float8 END`);
  }
}
