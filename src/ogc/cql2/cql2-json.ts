import { bboxGeometry, readGeoJsonGeometry } from './geometry.js';
import { FilterError, MAX_DEPTH, SPATIAL_FUNCTIONS, type ComparisonOperator, type Expression, type Operand, type SpatialFunction } from './cql2-ast.js';

/**
 * A reader of CQL2 JSON (OGC 21-065, Annex C, the JSON Schema of cql2-json) for the same conformance
 * classes as cql2-text.ts, into the same expressions: `{"op": …, "args": […]}` nodes, `{"property": …}`,
 * `{"timestamp": …}`, `{"date": …}`, `{"bbox": […]}`, GeoJSON geometries, and strings, numbers and
 * booleans as themselves. Operator names are matched case-insensitively (the schema spells them in
 * lower case, `isNull` in camel case).
 */

const COMPARISON: ReadonlySet<string> = new Set(['=', '<>', '<', '>', '<=', '>=']);
const SPATIAL: ReadonlyMap<string, SpatialFunction> = new Map(SPATIAL_FUNCTIONS.map((fn) => [fn.toLowerCase(), fn]));
const GEOMETRY_TYPES = new Set(['Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon', 'GeometryCollection']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const show = (value: unknown) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

/** `{op, args}` with exactly these members, args an array of `count` (or at least `count` when `atLeast`). */
function operation(node: Record<string, unknown>, op: string, count: number, atLeast = false): unknown[] {
  const extra = Object.keys(node).find((key) => key !== 'op' && key !== 'args');
  if (extra !== undefined) throw new FilterError(`Unknown member "${extra}" in the "${op}" operation.`);
  const { args } = node;
  if (!Array.isArray(args)) throw new FilterError(`"${op}" needs "args", an array.`);
  if (atLeast ? args.length < count : args.length !== count) throw new FilterError(`"${op}" takes ${atLeast ? 'at least ' : ''}${count} argument${count === 1 ? '' : 's'}, got ${args.length}.`);
  return args;
}

function expression(node: unknown, depth: number): Expression {
  if (depth > MAX_DEPTH) throw new FilterError(`The filter nests deeper than ${MAX_DEPTH} levels.`);
  if (typeof node === 'boolean') return { kind: 'literal', value: node };
  if (!isObject(node) || typeof node.op !== 'string') throw new FilterError(`Expected a predicate ({"op": …, "args": […]}) or true/false, got ${show(node)}.`);
  const name = node.op.toLowerCase();
  const op = node.op;
  const inner = (value: unknown) => expression(value, depth + 1);
  const operand = (value: unknown) => readOperand(value, depth + 1);
  if (name === 'and' || name === 'or') return { kind: name, args: operation(node, op, 2, true).map(inner) };
  if (name === 'not') return { kind: 'not', arg: inner(operation(node, op, 1)[0]) };
  if (COMPARISON.has(name)) {
    const [left, right] = operation(node, op, 2).map(operand);
    return { kind: 'compare', op: name as ComparisonOperator, left, right };
  }
  if (name === 'like') {
    const [value, pattern] = operation(node, op, 2).map(operand);
    return { kind: 'like', negated: false, value, pattern };
  }
  if (name === 'between') {
    const [value, low, high] = operation(node, op, 3).map(operand);
    return { kind: 'between', negated: false, value, low, high };
  }
  if (name === 'in') {
    const [value, list] = operation(node, op, 2);
    if (!Array.isArray(list) || list.length === 0) throw new FilterError('"in" takes an operand and a non-empty array of values.');
    return { kind: 'in', negated: false, value: operand(value), list: list.map(operand) };
  }
  if (name === 'isnull') return { kind: 'isNull', negated: false, value: operand(operation(node, op, 1)[0]) };
  const spatial = SPATIAL.get(name);
  if (spatial) {
    const [left, right] = operation(node, op, 2).map(operand);
    return { kind: 'spatial', fn: spatial, left, right };
  }
  if (name === 's_dwithin') {
    const [left, right, distance] = operation(node, op, 3).map(operand);
    return { kind: 'dwithin', left, right, distance };
  }
  throw new FilterError(`Unknown operator "${op}": and, or, not, =, <>, <, >, <=, >=, like, between, in, isNull, ${[...SPATIAL.keys()].join(', ')}, s_dwithin.`);
}

function readOperand(node: unknown, depth: number): Operand {
  if (depth > MAX_DEPTH) throw new FilterError(`The filter nests deeper than ${MAX_DEPTH} levels.`);
  if (typeof node === 'string') return { kind: 'string', value: node };
  if (typeof node === 'number') return { kind: 'number', value: node };
  if (typeof node === 'boolean') return { kind: 'boolean', value: node };
  if (!isObject(node)) throw new FilterError(`Expected a value, a property or a geometry, got ${show(node)}.`);
  const keys = Object.keys(node);
  const only = (key: string) => {
    if (keys.length !== 1) throw new FilterError(`${show(node)}: "${key}" stands alone in its object.`);
    return node[key];
  };
  if ('property' in node) {
    const name = only('property');
    if (typeof name !== 'string' || name === '') throw new FilterError('"property" names a queryable: a non-empty string.');
    return { kind: 'property', name };
  }
  if ('timestamp' in node || 'date' in node) {
    const kind = 'timestamp' in node ? 'timestamp' : 'date';
    const value = only(kind);
    if (typeof value !== 'string') throw new FilterError(`"${kind}" is a string.`);
    return { kind, value };
  }
  if ('bbox' in node) {
    const value = only('bbox');
    if (!Array.isArray(value) || !value.every((n) => typeof n === 'number')) throw new FilterError('"bbox" is an array of 4 or 6 numbers.');
    return { kind: 'geometry', value: bboxGeometry(value) };
  }
  if (typeof node.type === 'string' && GEOMETRY_TYPES.has(node.type)) return { kind: 'geometry', value: readGeoJsonGeometry(node) };
  if (typeof node.op === 'string' && node.op.toLowerCase() === 'casei') return { kind: 'casei', operand: readOperand(operation(node, node.op, 1)[0], depth + 1) };
  if (typeof node.op === 'string') throw new FilterError(`"${node.op}" is not a value: functions other than casei are not offered, and predicates cannot be compared.`);
  throw new FilterError(`Expected a value, a property or a geometry, got ${show(node)}.`);
}

/** Parses a cql2-json filter (JSON text); a FilterError names what is wrong. */
export function parseCql2Json(text: string): Expression {
  let node: unknown;
  try {
    node = JSON.parse(text);
  } catch (error) {
    throw new FilterError(`The filter is not JSON: ${(error as Error).message}.`);
  }
  return expression(node, 0);
}
