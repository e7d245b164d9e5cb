import { Injectable } from '@nestjs/common';
import type { CountedJson, PageRequest } from '../common/json-api/pagination.js';
import { rowShape, typed, type RowShape } from '../database/row-shape.js';
import { Sql } from '../database/sql.js';
import { twinJsonSql } from '../twins/twin.resource.js';

/** A geofence as its routes answer it: `geometry` as GeoJSON (parsed by pg). */
export interface GeofenceRow {
  id: string;
  name: string;
  description: string | null;
  geometry: Record<string, unknown>;
  created: string;
  modified: string;
}
const GEOFENCE: RowShape<GeofenceRow> = rowShape({
  id: 'uuid',
  name: 'varchar',
  description: 'varchar?',
  geometry: typed<Record<string, unknown>>(),
  created: 'timestamptz',
  modified: 'timestamptz',
});
const COLUMNS = `g.id, g.name, g.description, ST_AsGeoJSON(g.geometry)::json AS geometry, g.created, g.modified`;
const COUNT = rowShape({ count: 'integer' });
const VALIDITY = rowShape({ reason: 'text?' });
const TWINS_PAGE = rowShape({ found: 'boolean', count: 'integer', data: 'text' });
const SHAPES = rowShape({ version: 'text?', vertices: 'integer?', id: 'uuid?', wkb: 'bytea?' });

/** A geometry parameter: GeoJSON text as WGS 84. */
const geometrySql = (n: string) => `ST_SetSRID(ST_GeomFromGeoJSON(${n}::text), 4326)`;

export interface GeofenceChanges {
  name?: string;
  description?: string | null;
  /** GeoJSON text, checked by `invalidReason` first. */
  geometry?: string;
}

/** SQL of geofences, every statement scoped to the organization. */
@Injectable()
export class GeofencesRepository {
  constructor(private readonly sql: Sql) {}

  /** Why PostGIS holds the GeoJSON geometry invalid (`ST_IsValidReason`), or null when it is valid. */
  async invalidReason(geojson: string): Promise<string | null> {
    const row = await this.sql.one(VALIDITY, `SELECT CASE WHEN ST_IsValid(g) THEN NULL ELSE ST_IsValidReason(g) END AS reason FROM (SELECT ${geometrySql('$1')} AS g) x`, [geojson]);
    return row.reason;
  }

  async create(organizationId: string, geofence: { name: string; description: string | null; geometry: string }): Promise<GeofenceRow> {
    return this.sql.one(
      GEOFENCE,
      `INSERT INTO geofences AS g (organization_id, name, description, geometry) VALUES ($1, $2, $3, ${geometrySql('$4')}) RETURNING ${COLUMNS}`,
      [organizationId, geofence.name, geofence.description, geofence.geometry],
    );
  }

  async count(organizationId: string): Promise<number> {
    return this.sql.value(COUNT, `SELECT count(*)::int AS count FROM geofences WHERE organization_id = $1`, [organizationId]);
  }

  /** Oldest first. */
  page(organizationId: string, page: PageRequest): Promise<GeofenceRow[]> {
    return this.sql.rows(GEOFENCE, `SELECT ${COLUMNS} FROM geofences g WHERE g.organization_id = $1 ORDER BY g.created, g.id LIMIT $2 OFFSET $3`, [organizationId, page.size, page.offset]);
  }

  async find(organizationId: string, id: string): Promise<GeofenceRow | undefined> {
    return this.sql.first(GEOFENCE, `SELECT ${COLUMNS} FROM geofences g WHERE g.organization_id = $1 AND g.id = $2`, [organizationId, id]);
  }

  /** Only the attributes given change; `modified` moves. Undefined when the organization has no such geofence. */
  async update(organizationId: string, id: string, changes: GeofenceChanges): Promise<GeofenceRow | undefined> {
    return this.sql.first(
      GEOFENCE,
      `UPDATE geofences g
          SET name = coalesce($3, g.name),
              description = CASE WHEN $4 THEN $5 ELSE g.description END,
              geometry = CASE WHEN $6::text IS NULL THEN g.geometry ELSE ${geometrySql('$6')} END,
              modified = now()
        WHERE g.organization_id = $1 AND g.id = $2
        RETURNING ${COLUMNS}`,
      [organizationId, id, changes.name ?? null, changes.description !== undefined, changes.description ?? null, changes.geometry ?? null],
    );
  }

  /** Whether it existed. Crossings recorded before stay on the timelines (their events name it). */
  async delete(organizationId: string, id: string): Promise<boolean> {
    return (await this.sql.affected(`DELETE FROM geofences WHERE organization_id = $1 AND id = $2`, [organizationId, id])) > 0;
  }

  /**
   * The organization's geofences as WKB, with the version of the set they form (migration GeofenceSets),
   * read in one snapshot; none when they have more than `maxVertices` vertices in all (only the version
   * and that count then). The version is null when the organization never had a geofence.
   */
  async shapes(organizationId: string, maxVertices: number): Promise<{ version: string | null; vertices: number; rows: { id: string; wkb: Uint8Array }[] }> {
    const rows = await this.sql.rows(
      SHAPES,
      `WITH n AS (SELECT coalesce(sum(ST_NPoints(g.geometry)), 0)::int AS vertices FROM geofences g WHERE g.organization_id = $1)
       SELECT (SELECT s.version::text FROM geofence_sets s WHERE s.organization_id = $1) AS version, n.vertices, g.id, ST_AsBinary(g.geometry) AS wkb
         FROM n LEFT JOIN geofences g ON g.organization_id = $1 AND n.vertices <= $2`,
      [organizationId, maxVertices],
    );
    const held = rows.flatMap((row) => (row.id !== null && row.wkb !== null ? [{ id: row.id, wkb: row.wkb }] : []));
    return { version: rows[0].version, vertices: rows[0].vertices ?? 0, rows: held };
  }

  /**
   * A page of the organization's twins whose current location the geofence covers (a boundary is
   * inside), in the twins feature's list form, by name then id, with the count; `found` false when the
   * organization has no such geofence. The twins' GiST index on location answers `&&`.
   */
  async twinsInside(organizationId: string, id: string, page: PageRequest): Promise<CountedJson & { found: boolean }> {
    return this.sql.one(
      TWINS_PAGE,
      `WITH g AS (SELECT g.geometry FROM geofences g WHERE g.organization_id = $1 AND g.id = $2),
            inside AS (
              SELECT t.* FROM twins t, g
               WHERE t.organization_id = $1 AND t.location && g.geometry AND ST_Covers(g.geometry, t.location))
       SELECT EXISTS (SELECT 1 FROM g) AS found, (SELECT count(*) FROM inside)::int AS count,
              (SELECT coalesce(json_agg(${twinJsonSql('list', 't')} ORDER BY t.name, t.id), '[]'::json)::text
                 FROM (SELECT * FROM inside i ORDER BY i.name, i.id LIMIT $3 OFFSET $4) t) AS data`,
      [organizationId, id, page.size, page.offset],
    );
  }
}
