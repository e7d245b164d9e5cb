import { JsonText } from './resource.js';
import { invalidParameter, notFound } from './api-error.js';

/** A validated request for one page (page numbers start at 1). */
export interface PageRequest {
  number: number;
  size: number;
  offset: number;
}

export interface PageLimits {
  defaultSize: number;
  maxSize: number;
}

export const PAGE_PARAMETERS = ['page_number', 'page_size'] as const;
/** Keyset paging, on the routes that offer it (cursor.ts). */
export const CURSOR_PARAMETERS = ['page_after', 'page_before'] as const;

const POSITIVE_INTEGER = /^[1-9]\d{0,9}$/;

/**
 * The paging parameters as given: `page_number` and `page_size` (positive whole numbers; the route's
 * limits apply in `pageRequest`), or a cursor (`page_after`, `page_before`: opaque text, '' for the
 * first or last page; checked in cursor.ts).
 */
export interface PageParams {
  number?: number;
  size?: number;
  after?: string;
  before?: string;
}

export function readPageParams(query: Record<string, unknown>): PageParams {
  const params: PageParams = {};
  const number = readPositive(query, 'page_number');
  const size = readPositive(query, 'page_size');
  if (number !== undefined) params.number = number;
  if (size !== undefined) params.size = size;
  if (typeof query.page_after === 'string') params.after = query.page_after;
  if (typeof query.page_before === 'string') params.before = query.page_before;
  if (params.after !== undefined && params.before !== undefined) throw invalidParameter('page_before', 'Give page_after or page_before, not both.');
  if (params.number !== undefined && (params.after !== undefined || params.before !== undefined)) {
    throw invalidParameter('page_number', 'page_number numbers pages; page_after/page_before follow a cursor: give one kind, not both.');
  }
  return params;
}

/** True when the request pages by cursor rather than by number. */
export const isCursorPaging = (params: PageParams): boolean => params.after !== undefined || params.before !== undefined;

/** The page to read: the given page within the route's limits (a size above the maximum is a 400), defaults filled in. */
export function pageRequest(params: PageParams, limits: PageLimits): PageRequest {
  const number = params.number ?? 1;
  if (params.size !== undefined && params.size > limits.maxSize) throw invalidParameter('page_size', `page_size must be at most ${limits.maxSize}.`);
  const size = params.size ?? limits.defaultSize;
  return { number, size, offset: (number - 1) * size };
}

function readPositive(query: Record<string, unknown>, name: string): number | undefined {
  const raw = query[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !POSITIVE_INTEGER.test(raw) || Number(raw) > Number.MAX_SAFE_INTEGER) {
    throw invalidParameter(name, `${name} must be a whole number of at least 1.`);
  }
  return Number(raw);
}

/** Number of pages for a count; an empty list still has its first (empty) page. */
export function pageCount(count: number, size: number): number {
  return Math.max(1, Math.ceil(count / size));
}

/**
 * Pages past the end are a 404, as in the framework the original service ran on. Call it with the
 * count before fetching rows, so an out-of-range page costs one count query and nothing more.
 */
export function assertPageExists(request: PageRequest, count: number): void {
  const pages = pageCount(count, request.size);
  if (request.number > pages) {
    throw notFound(`Page ${request.number} does not exist; the last page is ${pages}.`);
  }
}

/**
 * The paging sequence every list follows: count, 404 past the last page (before fetching anything),
 * fetch the rows only when there are any, map them to resources.
 */
export async function loadPage<Row, Item>(
  request: PageRequest,
  count: () => Promise<number>,
  rows: () => Promise<Row[]>,
  toItem: (row: Row) => Item,
): Promise<Page<Item[]>> {
  const total = await count();
  assertPageExists(request, total);
  const found = total === 0 ? [] : await rows();
  return new Page(found.map(toItem), request, total);
}

/**
 * A page's count and its items as JSON text, read in one statement (the items are '[]' past the end),
 * with the resources included with it when asked for.
 */
export interface CountedJson {
  count: number;
  data: string;
  included?: string | null;
}

/** The same sequence for a page read in one statement: 404 past the last page, else the page. */
export function pageOfJson(request: PageRequest, counted: CountedJson): Page<JsonText> {
  assertPageExists(request, counted.count);
  return new Page(new JsonText(counted.data, counted.included ?? undefined), request, counted.count);
}

/** One page of results; the envelope interceptor turns it into `{links, data, meta.pagination}`. */
export class Page<T> {
  constructor(
    readonly data: T,
    readonly request: PageRequest,
    readonly count: number,
  ) {}

  get pages(): number {
    return pageCount(this.count, this.request.size);
  }
}

export interface PageLinks {
  first: string | null;
  last: string | null;
  next: string | null;
  prev: string | null;
}

export interface PaginationMeta {
  pagination: { page: number; pages: number; count: number };
}

/** Values that form-urlencoding leaves as they are: page numbers and cursors (base64url, '.'). */
const FORM_SAFE = /^[A-Za-z0-9*._-]*$/;
const formValue = (value: string): string => (FORM_SAFE.test(value) ? value : new URLSearchParams([['', value]]).toString().slice(1));

/**
 * The links of one page, as functions of their page parameter's value: the request URL (absolute) with
 * `drop` removed and then `parameter` set, exactly what `url.searchParams` gives (the whole query
 * re-serialized, a parameter that was there kept in its place, else appended). A URL's searchParams
 * re-parse the whole URL on every change; a page's links made that way cost more than its cursor's HMAC. So the query is parsed and serialized once per page, off the URL, and the links
 * share its text.
 */
export function pageUrl(requestUrl: URL, parameter: string, drop: readonly string[] = []): (value: string) => string {
  const href = requestUrl.href;
  // The first '?' starts the query and the first '#' the fragment: the URL escapes them elsewhere.
  const hashAt = href.indexOf('#');
  const beforeHash = hashAt < 0 ? href : href.slice(0, hashAt);
  const queryAt = beforeHash.indexOf('?');
  // With its '?': the constructor drops one leading '?', which must not be the query's own first character.
  const params = new URLSearchParams(queryAt < 0 ? '' : beforeHash.slice(queryAt));
  for (const name of drop) params.delete(name);
  params.set(parameter, '');
  const query = params.toString();
  // The query holds one `parameter=`: names and values are escaped, so no other text reads so.
  const marker = `${parameter}=`;
  const end = (query.startsWith(marker) ? 0 : query.indexOf(`&${marker}`) + 1) + marker.length;
  const head = `${queryAt < 0 ? beforeHash : beforeHash.slice(0, queryAt)}?${query.slice(0, end)}`;
  const tail = `${query.slice(end)}${hashAt < 0 ? '' : href.slice(hashAt)}`;
  return (value) => `${head}${formValue(value)}${tail}`;
}

/** Absolute page links that keep every other query parameter of the request and only swap `page_number`. */
export function pageLinks(requestUrl: URL, page: Page<unknown>): PageLinks {
  const pages = page.pages;
  const current = page.request.number;
  const withNumber = pageUrl(requestUrl, 'page_number');
  const at = (number: number) => withNumber(String(number));
  return {
    first: at(1),
    last: at(pages),
    next: current < pages ? at(current + 1) : null,
    prev: current > 1 ? at(Math.min(current - 1, pages)) : null,
  };
}

export function paginationMeta(page: Page<unknown>): PaginationMeta {
  return { pagination: { page: page.request.number, pages: page.pages, count: page.count } };
}
