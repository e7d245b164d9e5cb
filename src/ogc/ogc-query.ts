import { invalidParameter } from '../common/json-api/api-error.js';
import { declareQuery, isCalendarTimestamp, isInstant, param, params, type ParamReader, type QueryOf } from '../common/json-api/query.js';
import { TWIN_FILTER_PARAMETERS } from '../twins/twin-filters.js';
import { MAX_FILTER_LENGTH, type Expression, type Operand } from './cql2/cql2-ast.js';
import { FEATURE_PROPERTIES, TWIN_QUERYABLES } from './ogc-queryables.js';
import { CRS84 } from './ogc.resource.js';

/** Features of an items page: `limit`'s default and its largest value (a larger one is read as it, as Part 1 permits). */
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 10_000;

/** `bbox`: the boxes to look in (two when it crosses the antimeridian), CRS84 degrees. */
export interface Box {
  west: number;
  south: number;
  east: number;
  north: number;
}

/** `datetime` on `modified`: from `start` (included), to `end` (included, or excluded when `endExclusive`). */
export interface ModifiedRange {
  start?: string;
  end?: string;
  endExclusive?: boolean;
}

const isDate = (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value) && isCalendarTimestamp(value);
const nextDay = (date: string) => {
  const [y, m, d] = date.split('-').map(Number);
  return new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
};

/** bbox=minLon,minLat,maxLon,maxLat (or 6 numbers with heights, which are ignored); minLon > maxLon crosses the antimeridian. */
const readBbox: ParamReader<Box[]> = (raw, name) => {
  const count = raw.split(',').length;
  const numbers = params.numbers(count === 6 ? 6 : 4)(raw, name);
  const [west, south, east, north] = count === 6 ? [numbers[0], numbers[1], numbers[3], numbers[4]] : numbers;
  if ([west, east].some((lon) => lon < -180 || lon > 180) || [south, north].some((lat) => lat < -90 || lat > 90)) {
    throw invalidParameter(name, `${name}: longitudes are from -180 to 180, latitudes from -90 to 90 (CRS84).`);
  }
  if (south > north) throw invalidParameter(name, `${name}: the southern edge (${south}) is north of the northern one (${north}).`);
  return west <= east ? [{ west, south, east, north }] : [{ west, south, east: 180, north }, { west: -180, south, east, north }];
};

/**
 * datetime: an instant or a date (`modified` at it, or within that UTC day), or an interval `a/b` of
 * instants or dates, either end open (`..` or empty); both ends included (a date end: its whole day).
 */
const readDatetime: ParamReader<ModifiedRange> = (raw, name) => {
  const bad = (why: string) => invalidParameter(name, `${name} ${why}: an instant (2026-11-21T19:26:03Z), a date (2026-11-21), or an interval of them (start/end, ".." for an open end).`);
  const value = (part: string) => {
    if (!isInstant(part) && !isDate(part)) throw bad(`has "${part}"`);
    return part;
  };
  const parts = raw.split('/');
  if (parts.length > 2) throw bad('has more than one "/"');
  if (parts.length === 1) {
    const at = value(parts[0]);
    return isDate(at) ? { start: `${at}T00:00:00Z`, end: `${nextDay(at)}T00:00:00Z`, endExclusive: true } : { start: at, end: at };
  }
  const open = (part: string) => part === '' || part === '..';
  const range: ModifiedRange = {};
  if (!open(parts[0])) {
    const start = value(parts[0]);
    range.start = isDate(start) ? `${start}T00:00:00Z` : start;
  }
  if (!open(parts[1])) {
    const end = value(parts[1]);
    if (isDate(end)) Object.assign(range, { end: `${nextDay(end)}T00:00:00Z`, endExclusive: true });
    else range.end = end;
  }
  if (range.start !== undefined && range.end !== undefined) {
    const [start, end] = [Date.parse(range.start), Date.parse(range.end)];
    if (range.endExclusive ? start >= end : start > end) throw bad('ends before it starts');
  }
  return range;
};

/** limit: a whole number from 1; above MAX_LIMIT it is MAX_LIMIT (OGC API – Features Part 1: not an error). */
const readLimit: ParamReader<number> = (raw, name) => {
  if (!/^[1-9]\d{0,9}$/.test(raw)) throw invalidParameter(name, `${name} must be a whole number from 1 (at most ${MAX_LIMIT} features are returned).`);
  return Math.min(Number(raw), MAX_LIMIT);
};

const readFilter: ParamReader<string> = (raw, name) => {
  if (raw.trim() === '') throw invalidParameter(name, `${name} must not be empty.`);
  if (raw.length > MAX_FILTER_LENGTH) throw invalidParameter(name, `${name} must be at most ${MAX_FILTER_LENGTH} characters.`);
  if (raw.includes('\u0000')) throw invalidParameter(name, `${name} must not contain NUL characters.`);
  return raw;
};

/** properties=a,b (OGC API – Features Part 6 style): the properties each feature shows; empty: none. */
const readProperties: ParamReader<string[]> = (raw, name) => {
  const names = raw === '' ? [] : raw.split(',').map((item) => item.trim());
  const unknown = names.find((item) => !FEATURE_PROPERTIES.includes(item));
  if (unknown !== undefined) throw invalidParameter(name, `${name}: "${unknown}" is not a property of the twins; they are ${FEATURE_PROPERTIES.join(', ')}.`);
  return [...new Set(names)];
};

/** page_after / page_before: a cursor from a `next` / `prev` link (checked by the cursor codec). */
const readCursor: ParamReader<string> = (raw, name) => {
  if (raw.length === 0 || raw.length > 4096) throw invalidParameter(name, `${name} is a cursor from a next or prev link.`);
  return raw;
};

/** `f`: the encoding asked for; JSON is the only one (GeoJSON for features). */
const FORMAT = param.oneOf('json', 'geojson')('The encoding; JSON (GeoJSON for features) is the only one, and the default.');

export const OGC_QUERY = declareQuery({ f: FORMAT });

/**
 * The queryables as query parameters (Part 3, Queryables as Query Parameters): `name=Ada` keeps the
 * twins whose `name` is `Ada`. All but `geometry`, and `organization`, which is the list filter of that
 * name (the same equality).
 */
const EQUALITY_NAMES = Object.keys(TWIN_QUERYABLES).filter((name) => name !== 'geometry' && name !== 'organization');

const equalityParameter = (name: string) => {
  const { type } = TWIN_QUERYABLES[name];
  const description = `Only twins whose \`${name}\` is this value (the queryable as a query parameter).`;
  if (type === 'boolean') return param.custom(params.boolean, { type: 'boolean' })(description);
  if (type === 'timestamp') {
    return param.custom<string>((raw, parameter) => {
      if (!isInstant(raw)) throw invalidParameter(parameter, `${parameter} must be an instant (2026-11-21T19:26:03.123456Z).`);
      return raw;
    }, { type: 'string', format: 'date-time' })(description);
  }
  return param.custom<string>((raw, parameter) => {
    if (raw.length > 1000 || raw.includes('\u0000')) throw invalidParameter(parameter, `${parameter} must be at most 1000 characters, without NUL.`);
    return raw;
  })(description);
};

const EQUALITY_PARAMETERS = Object.fromEntries(EQUALITY_NAMES.map((name) => [name, equalityParameter(name)]));

/** The queryables given as query parameters, as the CQL2 comparisons they mean. */
export function queryableEqualities(given: object): Expression[] {
  const query = given as Record<string, unknown>;
  return EQUALITY_NAMES.filter((name) => query[name] !== undefined).map((name) => {
    const value = query[name] as string | boolean;
    const right: Operand =
      typeof value === 'boolean' ? { kind: 'boolean', value } : TWIN_QUERYABLES[name].type === 'timestamp' ? { kind: 'timestamp', value } : { kind: 'string', value };
    return { kind: 'compare', op: '=', left: { kind: 'property', name }, right };
  });
}

/** `GET /ogc/collections/twins/items`. */
export const ITEMS_QUERY = declareQuery(
  {
    bbox: param.custom(readBbox)('minLon,minLat,maxLon,maxLat in CRS84 degrees (6 numbers: with heights, ignored); minLon > maxLon crosses the antimeridian.', '2.2,48.8,2.5,48.9'),
    datetime: param.custom(readDatetime)(
      'On `modified`: an instant, a date (that UTC day), or an interval `start/end` of them (`..` or empty: open), both ends included.',
      '2026-01-01T00:00:00Z/..',
    ),
    limit: param.custom(readLimit, { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT })(
      `Features per page: default ${DEFAULT_LIMIT}; more than ${MAX_LIMIT} is read as ${MAX_LIMIT}.`,
      1000,
    ),
    filter: param.custom(readFilter)('A CQL2 filter over the queryables (`/ogc/collections/twins/queryables`), in the language `filter-lang` names.', "name LIKE 'Café%' AND S_INTERSECTS(geometry, BBOX(2.2,48.8,2.5,48.9))"),
    'filter-lang': param.oneOf('cql2-text', 'cql2-json', 'cql-text')(
      'The language of `filter`: `cql2-text` (the default), `cql2-json`, or `cql-text` (the pre-CQL2 name GDAL 3.6 sends: the same grammar, reading literals as GDAL writes them: a quoted instant compared with a timestamp queryable is a timestamp, 0 and 1 compared with a boolean one are false and true).',
    ),
    'filter-crs': param.oneOf(CRS84)('The CRS of the filter\'s geometries: CRS84 (longitude, latitude), the only one.'),
    properties: param.custom(readProperties)('Comma-separated: the properties each feature shows (all when absent, none when empty).', 'name,description'),
    page_after: param.custom(readCursor)('The page after a position: the cursor of a `next` link.'),
    page_before: param.custom(readCursor)('The page before a position: the cursor of a `prev` link.'),
    f: FORMAT,
    ...TWIN_FILTER_PARAMETERS,
    ...EQUALITY_PARAMETERS,
  },
  {
    check: (query) => {
      if (query.page_after !== undefined && query.page_before !== undefined) throw invalidParameter('page_before', 'Give page_after or page_before, not both.');
    },
  },
);
export type ItemsQuery = QueryOf<typeof ITEMS_QUERY.parameters>;
