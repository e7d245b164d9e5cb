import { Page, pageLinks, paginationMeta } from './pagination.js';
import { JsonText } from './resource.js';

/**
 * Marks a handler result that is already the complete response body (e.g. the contract's bare
 * `{revenue}`), so the envelope interceptor passes it through untouched.
 */
export class RawBody<T> {
  constructor(readonly body: T) {}
}

/**
 * The one envelope builder: a resource or list becomes `{data}`, a page becomes
 * `{links, data, meta: {pagination}}`. With JsonText data the envelope is written around the text.
 */
export function buildEnvelope(result: unknown, requestUrl: () => URL): unknown {
  if (result instanceof RawBody) return result.body;
  if (result instanceof JsonText) return `{"data":${result.text}}`;
  if (result instanceof Page) {
    // The absolute URL is only worked out when links need it (pages), not for every resource.
    const links = pageLinks(requestUrl(), result);
    const meta = paginationMeta(result);
    if (result.data instanceof JsonText) return `{"links":${JSON.stringify(links)},"data":${result.data.text},"meta":${JSON.stringify(meta)}}`;
    return { links, data: result.data, meta };
  }
  return { data: result };
}
