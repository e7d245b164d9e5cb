import type { PipeTransform } from '@nestjs/common';
import { invalidParameter } from './api-error.js';
import { CURSOR_PARAMETERS, PAGE_PARAMETERS, readPageParams, type PageParams } from './pagination.js';
import { offersParameter, readRepresentation, type Representation, type RepresentationOffer } from './representation.js';
import { isUuid } from '../value-checks.js';

/** Reads one raw query value; throws `invalidParameter` when it is malformed. */
export type ParamReader<T> = (raw: string, name: string) => T;

export type QueryReaders<T> = { [K in keyof T]-?: ParamReader<NonNullable<T[K]>> };

const MAX_TEXT = 1000;

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(?:Z|[+-](\d{2}):?(\d{2}))?)?$/;

/**
 * `2026-11-21`, `2026-11-21T19:26`, `…:03.123456Z`, `…+01:00`: the form, and a day that exists.
 * `Date.parse` takes 2026-02-31 and year 0, which PostgreSQL refuses (22008): that was a 500.
 */
export function isCalendarTimestamp(raw: string): boolean {
  const match = TIMESTAMP.exec(raw);
  if (!match) return false;
  const part = (index: number) => (match[index] === undefined ? 0 : Number(match[index]));
  return isRealMoment(part(1), part(2), part(3), part(4), part(5), part(6), part(7), part(8));
}

/** Whether the (non-negative) parts name a day that exists, a time of day, and an offset PostgreSQL takes (up to ±15:59). */
function isRealMoment(year: number, month: number, day: number, hour: number, minute: number, second: number, offsetHour: number, offsetMinute: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  if (day > (month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1])) return false;
  return hour <= 23 && minute <= 59 && second <= 59 && offsetHour <= 15 && offsetMinute <= 59;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * One instant: a calendar timestamp with seconds and an explicit offset (`Z` or `±hh:mm`), at most
 * microseconds (PostgreSQL's precision: more digits would be rounded, i.e. altered). A device clock's
 * reading sent as a value, not a filter: a date alone or a local time names no instant.
 *
 * `YYYY-MM-DDThh:mm:ss[.f{1,6}](Z|±hh:mm)`, read character by character: every position of an upload
 * is one, and two regular expressions and their captures cost a batch of 1,000 ~0.25 ms of Node
 * (bench/fleet.mjs profile). The same instants as isCalendarTimestamp with that form (a property test).
 */
export function isInstant(raw: string): boolean {
  const length = raw.length;
  if (length < 20 || length > 32) return false;
  if (raw.charCodeAt(4) !== DASH || raw.charCodeAt(7) !== DASH || raw.charCodeAt(10) !== T || raw.charCodeAt(13) !== COLON || raw.charCodeAt(16) !== COLON) return false;
  let at = 19;
  if (raw.charCodeAt(at) === DOT) {
    const from = ++at;
    while (at < length && isDigit(raw.charCodeAt(at))) at++;
    if (at === from || at - from > 6) return false;
  }
  let offsetHour = 0;
  let offsetMinute = 0;
  const zone = raw.charCodeAt(at);
  if (zone === Z) {
    if (at + 1 !== length) return false;
  } else {
    if ((zone !== PLUS && zone !== DASH) || at + 6 !== length || raw.charCodeAt(at + 3) !== COLON) return false;
    offsetHour = digits(raw, at + 1, 2);
    offsetMinute = digits(raw, at + 4, 2);
  }
  const year = digits(raw, 0, 4);
  const month = digits(raw, 5, 2);
  const day = digits(raw, 8, 2);
  const hour = digits(raw, 11, 2);
  const minute = digits(raw, 14, 2);
  const second = digits(raw, 17, 2);
  // digits() says -1 for a part that is no number.
  if (Math.min(year, month, day, hour, minute, second, offsetHour, offsetMinute) < 0) return false;
  return isRealMoment(year, month, day, hour, minute, second, offsetHour, offsetMinute);
}

const [DASH, COLON, DOT, PLUS, T, Z, ZERO] = ['-', ':', '.', '+', 'T', 'Z', '0'].map((c) => c.charCodeAt(0));
const isDigit = (code: number) => code >= ZERO && code <= ZERO + 9;

/** The number the `count` decimal digits of `raw` from `from` say, or -1 when one is no digit. */
function digits(raw: string, from: number, count: number): number {
  let value = 0;
  for (let i = from; i < from + count; i++) {
    const code = raw.charCodeAt(i);
    if (!isDigit(code)) return -1;
    value = value * 10 + (code - ZERO);
  }
  return value;
}

const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/** Readers for the value kinds the API's filters take. */
export const params = {
  boolean: ((raw, name) => {
    const value = raw.toLowerCase();
    if (value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
    throw invalidParameter(name, `${name} must be true or false.`);
  }) as ParamReader<boolean>,

  uuid: ((raw, name) => {
    if (!isUuid(raw)) throw invalidParameter(name, `${name} must be a UUID.`);
    return raw.toLowerCase();
  }) as ParamReader<string>,

  text: ((raw, name) => {
    if (raw.length === 0) throw invalidParameter(name, `${name} must not be empty.`);
    if (raw.length > MAX_TEXT) throw invalidParameter(name, `${name} must be at most ${MAX_TEXT} characters.`);
    if (raw.includes('\u0000')) throw invalidParameter(name, `${name} must not contain NUL characters.`);
    return raw;
  }) as ParamReader<string>,

  /** Comma-separated, non-empty items. */
  list: ((raw, name) => {
    const items = raw.split(',').map((item) => item.trim());
    if (items.length > 50 || items.some((item) => item.length === 0 || item.length > 255 || item.includes('\u0000'))) {
      throw invalidParameter(name, `${name} must be a comma-separated list of 1 to 50 non-empty values.`);
    }
    return items;
  }) as ParamReader<string[]>,

  /** Comma-separated finite numbers, exactly `count` of them. */
  numbers:
    (count: number): ParamReader<number[]> =>
    (raw, name) => {
      const parts = raw.split(',');
      const values = parts.map((part) => (/^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*$/.test(part) ? Number(part) : Number.NaN));
      if (parts.length !== count || values.some((value) => !Number.isFinite(value))) {
        throw invalidParameter(name, `${name} must be ${count} comma-separated numbers.`);
      }
      return values;
    },

  /** A finite number within [min, max]. */
  number:
    (min: number, max: number): ParamReader<number> =>
    (raw, name) => {
      const value = /^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*$/.test(raw) ? Number(raw) : Number.NaN;
      if (!Number.isFinite(value) || value < min || value > max) {
        throw invalidParameter(name, `${name} must be a number from ${min} to ${max}.`);
      }
      return value;
    },

  /** An ISO 8601 timestamp, kept as text so PostgreSQL compares it at full precision. */
  timestamp: ((raw, name) => {
    if (!isCalendarTimestamp(raw)) throw invalidParameter(name, `${name} must be an ISO 8601 timestamp of a real date.`);
    return raw;
  }) as ParamReader<string>,

  oneOf:
    <T extends string>(...allowed: T[]): ParamReader<T> =>
    (raw, name) => {
      if (!(allowed as string[]).includes(raw)) throw invalidParameter(name, `${name} must be one of: ${allowed.join(', ')}.`);
      return raw as T;
    },
};

/**
 * Validates a query string against the filters a route accepts. Unknown names, repeated names and
 * malformed values are 400s naming the parameter; `allowed` names the other parameters the route
 * takes, read elsewhere (paging, sparse fieldsets, include, sort).
 */
export function readQuery<T extends object>(query: Record<string, unknown>, readers: QueryReaders<T>, allowed: (name: string) => boolean = () => false): Partial<T> {
  const result: Partial<T> = {};
  for (const [name, raw] of Object.entries(query ?? {})) {
    // Own members only: a parameter named `__proto__` or `constructor` is an unknown name, not Object's.
    const reader = Object.hasOwn(readers, name) ? (readers as Record<string, ParamReader<unknown>>)[name] : undefined;
    if (!reader && !allowed(name)) throw invalidParameter(name, `Unknown query parameter "${name}".`);
    if (typeof raw !== 'string') throw invalidParameter(name, `${name} must be given once.`);
    if (reader) (result as Record<string, unknown>)[name] = reader(raw, name);
  }
  return result;
}

/** One query parameter, declared once: how its raw value is read, and how the OpenAPI document shows it. */
export interface QueryParameter<T> {
  read: ParamReader<T>;
  /** The OpenAPI schema of the raw value. */
  schema: Record<string, unknown>;
  description?: string;
  example?: unknown;
}

const declared =
  <T>(read: ParamReader<T>, schema: Record<string, unknown>) =>
  (description?: string, example?: unknown): QueryParameter<T> => ({ read, schema, description, example });

/** Query parameter declarations of the value kinds `params` reads. */
export const param = {
  boolean: declared(params.boolean, { type: 'boolean' }),
  uuid: declared(params.uuid, { type: 'string', format: 'uuid' }),
  text: declared(params.text, { type: 'string' }),
  list: declared(params.list, { type: 'string' }),
  timestamp: declared(params.timestamp, { type: 'string' }),
  number: (min: number, max: number) => declared(params.number(min, max), { type: 'number', minimum: min, maximum: max }),
  oneOf: <T extends string>(...allowed: T[]) => declared(params.oneOf(...allowed), { type: 'string', enum: allowed }),
  /** A kind of its own (a bounding box, a point…): its reader and the schema of its raw text. */
  custom: <T>(read: ParamReader<T>, schema: Record<string, unknown> = { type: 'string' }) => declared(read, schema),
};

export type QueryParameters = Record<string, QueryParameter<unknown>>;

/**
 * What a declaration reads: each declared parameter that was given, typed; the representation asked
 * for (`fields`, `include`, `sort`: see representation.ts); `page` on paginated routes.
 */
export type QueryOf<P extends QueryParameters, Paginated extends boolean = false> = {
  [K in keyof P]?: P[K] extends QueryParameter<infer T> ? T : never;
} & Representation &
  (Paginated extends true ? { page: PageParams } : unknown);

/** How the OpenAPI document describes a paginated route's `page_size` (the limits themselves are configuration). */
export interface PageDocs {
  defaultSize?: number;
  maxSize?: number;
  description?: string;
}

export interface QueryOptions<P extends QueryParameters, Paginated extends boolean> extends RepresentationOffer {
  paginated?: Paginated;
  /** Keyset pages (`page_after`/`page_before`) beside numbered ones. */
  cursor?: boolean;
  pageDocs?: PageDocs;
  /** Checks across parameters (combinations that mean nothing), after each was read. */
  check?: (values: QueryOf<P>) => void;
}

/**
 * The query string of a route, declared once. The same declaration validates (as the route's
 * `@Query(DECLARATION)` pipe: unknown, repeated and malformed parameters are 400s with
 * `source.parameter`, before the controller runs), types what the service receives (`QueryOf`), and
 * documents the parameters (`ApiQueryParameters` in common/openapi/docs.ts).
 */
export class QueryDeclaration<P extends QueryParameters, Paginated extends boolean = false> implements PipeTransform<unknown, QueryOf<P, Paginated>> {
  private readonly readers: QueryReaders<Record<string, unknown>>;
  private readonly others: (name: string) => boolean;

  constructor(
    readonly parameters: P,
    readonly options: QueryOptions<P, Paginated> = {},
  ) {
    this.readers = Object.fromEntries(Object.entries(parameters).map(([name, parameter]) => [name, parameter.read])) as QueryReaders<Record<string, unknown>>;
    const paging = new Set<string>([...(options.paginated ? PAGE_PARAMETERS : []), ...(options.paginated && options.cursor ? CURSOR_PARAMETERS : [])]);
    this.others = (name) => paging.has(name) || offersParameter(options, name);
  }

  read(query: Record<string, unknown>): QueryOf<P, Paginated> {
    const values = { ...readQuery(query, this.readers, this.others), ...readRepresentation(query, this.options) } as QueryOf<P>;
    this.options.check?.(values);
    return (this.options.paginated ? { ...values, page: readPageParams(query) } : values) as QueryOf<P, Paginated>;
  }

  transform(value: unknown): QueryOf<P, Paginated> {
    return this.read((value ?? {}) as Record<string, unknown>);
  }
}

export function declareQuery<P extends QueryParameters, Paginated extends boolean = false>(
  parameters: P,
  options: QueryOptions<P, Paginated> = {},
): QueryDeclaration<P, Paginated> {
  return new QueryDeclaration(parameters, options);
}

/** A route that takes no query parameters: any given one is a 400 naming it. */
export const NO_QUERY_PARAMETERS = declareQuery({});

