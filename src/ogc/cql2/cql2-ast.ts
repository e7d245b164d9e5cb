/**
 * The CQL2 expressions this service evaluates (OGC 21-065, Common Query Language), as both encodings
 * read them: cql2-text (cql2-text.ts) and cql2-json (cql2-json.ts) parse into these nodes, and
 * cql2-sql.ts compiles them into SQL. Which queryable a property names, and the types that must
 * agree, are checked by the compiler: the parsers only know the grammar.
 */

/** A GeoJSON geometry (RFC 7946), checked for its shape by readGeoJsonGeometry; WKT literals are read into it. */
export interface GeoJsonGeometry {
  type: 'Point' | 'MultiPoint' | 'LineString' | 'MultiLineString' | 'Polygon' | 'MultiPolygon' | 'GeometryCollection';
  coordinates?: unknown;
  geometries?: GeoJsonGeometry[];
}

/** An operand: a queryable, a literal, or CASEI of a character operand. */
export type Operand =
  | { kind: 'property'; name: string }
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: number }
  | { kind: 'boolean'; value: boolean }
  /** TIMESTAMP('…'): an instant, as written (checked to be one). */
  | { kind: 'timestamp'; value: string }
  /** DATE('…'): a calendar date, as written. */
  | { kind: 'date'; value: string }
  | { kind: 'geometry'; value: GeoJsonGeometry }
  | { kind: 'casei'; operand: Operand };

export type ComparisonOperator = '=' | '<>' | '<' | '>' | '<=' | '>=';

/** The spatial functions of CQL2 (Spatial Functions conformance class), each PostGIS's ST_<name>. */
export const SPATIAL_FUNCTIONS = ['S_INTERSECTS', 'S_EQUALS', 'S_DISJOINT', 'S_TOUCHES', 'S_WITHIN', 'S_OVERLAPS', 'S_CROSSES', 'S_CONTAINS'] as const;
export type SpatialFunction = (typeof SPATIAL_FUNCTIONS)[number];

export type Expression =
  | { kind: 'and' | 'or'; args: Expression[] }
  | { kind: 'not'; arg: Expression }
  | { kind: 'literal'; value: boolean }
  | { kind: 'compare'; op: ComparisonOperator; left: Operand; right: Operand }
  | { kind: 'like'; negated: boolean; value: Operand; pattern: Operand }
  | { kind: 'between'; negated: boolean; value: Operand; low: Operand; high: Operand }
  | { kind: 'in'; negated: boolean; value: Operand; list: Operand[] }
  | { kind: 'isNull'; negated: boolean; value: Operand }
  | { kind: 'spatial'; fn: SpatialFunction; left: Operand; right: Operand }
  /** S_DWITHIN(a, b, metres): this service's documented extension, measured on the sphere. */
  | { kind: 'dwithin'; left: Operand; right: Operand; distance: Operand };

/** A filter the client got wrong: its message names the problem (the caller reports it on `filter`). */
export class FilterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FilterError';
  }
}

/** Nesting deeper than this is refused (a recursive parser and compiler: no stack overflow from a hostile filter). */
export const MAX_DEPTH = 64;
/** Filters longer than this are refused before parsing. */
export const MAX_FILTER_LENGTH = 64 * 1024;
