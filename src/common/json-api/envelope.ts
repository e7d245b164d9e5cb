import { Page, pageLinks, paginationMeta } from './pagination.js';

/**
 * Marks a handler result that is already the complete response body (e.g. the contract's bare
 * `{revenue}`), so the envelope interceptor passes it through untouched.
 */
export class RawBody<T> {
  constructor(readonly body: T) {}
}

/**
 * The one envelope builder: a resource or list becomes `{data}`, a page becomes
 * `{links, data, meta: {pagination}}`.
 */
export function buildEnvelope(result: unknown, requestUrl: () => URL): unknown {
  if (result instanceof RawBody) return result.body;
  if (result instanceof Page) {
    // The absolute URL is only worked out when links need it (pages), not for every resource.
    return { links: pageLinks(requestUrl(), result), data: result.data, meta: paginationMeta(result) };
  }
  return { data: result };
}
