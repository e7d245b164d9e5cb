import { createHmac, timingSafeEqual } from 'node:crypto';
import type { KeysetDirection, KeysetRows } from '../../database/keyset.js';
import { invalidParameter } from './api-error.js';
import { pageUrl, type PageLimits, type PageParams } from './pagination.js';
import type { SortDirective } from './representation.js';
import { JsonText } from './resource.js';

/**
 * Cursors of keyset pages (`page_after`, `page_before`): the sort key values of a row, with the list
 * and sort they belong to, signed (HMAC-SHA256, truncated to 128 bits) with the service's cursor key.
 * They are opaque to clients; a cursor that was altered, or that belongs to another list or another
 * sort, is a 400 naming the parameter, never a page from an arbitrary position.
 */
export class CursorCodec {
  constructor(private readonly key: Buffer) {}

  encode(scope: string, position: readonly string[]): string {
    const payload = Buffer.from(JSON.stringify([scope, position])).toString('base64url');
    return `${payload}.${this.sign(payload).toString('base64url')}`;
  }

  /** The position a cursor holds; a 400 on `parameter` when it is not one this service made for `scope`. */
  decode(scope: string, parameter: string, cursor: string): string[] {
    const refused = () => invalidParameter(parameter, `${parameter} is not a cursor of this list and sort; follow links.next / links.prev, or start again with ${parameter}= (empty).`);
    const dot = cursor.indexOf('.');
    if (dot <= 0 || cursor.length > 4096) throw refused();
    const payload = cursor.slice(0, dot);
    // Compared as text: base64url decoding ignores the spare bits of the last character, so two spellings
    // of one signature would otherwise both pass.
    const signature = Buffer.from(cursor.slice(dot + 1));
    const expected = Buffer.from(this.sign(payload).toString('base64url'));
    if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) throw refused();
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw refused();
    }
    if (!Array.isArray(decoded) || decoded[0] !== scope || !Array.isArray(decoded[1]) || !decoded[1].every((value) => typeof value === 'string')) throw refused();
    return decoded[1] as string[];
  }

  private sign(payload: string): Buffer {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, 16);
  }
}

/** The paging parameters a cursor link does not keep from the request. */
const LINK_DROPS = ['page_after', 'page_before', 'page_number'] as const;

/** A validated keyset page request. */
export interface CursorRequest {
  direction: KeysetDirection;
  /** The position to read from; null for the first page (after) or the last page (before). */
  position: string[] | null;
  size: number;
  /** The list and sort the cursors belong to (cursors of another scope are refused). */
  scope: string;
}

/** The scope of a list's cursors: the list's name and its sort, so a cursor only continues the listing it came from. */
export const cursorScope = (list: string, sort: readonly SortDirective[]): string =>
  `${list}:${sort.map((s) => `${s.descending ? '-' : ''}${s.key}`).join(',')}`;

/** The page a cursor request asks for (called when isCursorPaging(params)). */
export function cursorRequest(params: PageParams, limits: PageLimits, codec: CursorCodec, scope: string): CursorRequest {
  if (params.size !== undefined && params.size > limits.maxSize) throw invalidParameter('page_size', `page_size must be at most ${limits.maxSize}.`);
  const size = params.size ?? limits.defaultSize;
  const [direction, parameter, cursor] = params.before !== undefined ? (['before', 'page_before', params.before] as const) : (['after', 'page_after', params.after ?? ''] as const);
  return { direction, position: cursor === '' ? null : codec.decode(scope, parameter, cursor), size, scope };
}

export interface CursorLinks {
  first: string;
  last: string;
  prev: string | null;
  next: string | null;
}

/**
 * A keyset page: its items as JSON text and its links (`first`: page_after=, `last`: page_before=,
 * `prev`/`next` with cursors, null at the ends). No count is made: the envelope has no meta.pagination.
 */
export class CursorPage {
  constructor(
    readonly data: JsonText,
    readonly request: CursorRequest,
    readonly rows: KeysetRows,
    readonly codec: CursorCodec,
  ) {}

  links(requestUrl: URL): CursorLinks {
    const { request, rows } = this;
    // Every other paging parameter goes; the link's own is appended.
    const urls = { page_after: pageUrl(requestUrl, 'page_after', LINK_DROPS), page_before: pageUrl(requestUrl, 'page_before', LINK_DROPS) };
    const at = (parameter: 'page_after' | 'page_before', position: string[] | null) => urls[parameter](position ? this.codec.encode(request.scope, position) : '');
    // Past the far end of the rows (an empty page read from a position), the way back is the nearest
    // end of the list: the last page when reading forwards, the first when reading backwards.
    const forwards = request.direction === 'after';
    const next = forwards ? (rows.more ? at('page_after', rows.last) : null) : rows.beyond ? at('page_after', rows.last) : null;
    const prev = forwards ? (rows.beyond ? at('page_before', rows.first) : null) : rows.more ? at('page_before', rows.first) : null;
    return { first: at('page_after', null), last: at('page_before', null), prev, next };
  }
}

/** A keyset page of JSON text built by PostgreSQL (KeysetRows), with its included resources. */
export const cursorPageOfJson = (request: CursorRequest, rows: KeysetRows, codec: CursorCodec): CursorPage =>
  new CursorPage(new JsonText(rows.data, rows.included ?? undefined), request, rows, codec);
