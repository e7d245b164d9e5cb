import { versionEtag } from '../http/conditional.js';
import { CursorPage } from './cursor.js';
import { Page, pageLinks, pageUrl, paginationMeta } from './pagination.js';
import { GEO_JSON_MEDIA_TYPE, JsonText } from './resource.js';

/**
 * Marks a handler result that is already the complete response body (e.g. the contract's bare
 * `{revenue}`), so the envelope interceptor passes it through untouched.
 */
export class RawBody<T> {
  constructor(readonly body: T) {}
}

/**
 * A page of the map listing (`application/geo+json`): `features` is the page's GeoJSON FeatureCollection
 * as JSON text, `page` its place and count. Its envelope is the contract's
 * `{links, data: {results, meta, links}, meta}`, written by buildEnvelope like every other envelope.
 * Written there, the envelope's text is the interceptor's own, and it goes when its bytes are made: held
 * by the handler's result instead (a RawBody), the page's text outlived the request's scavenges and was
 * promoted to the old generation at 50 connections (docs/PERFORMANCE.md).
 */
export class FeaturePage {
  constructor(
    readonly features: string,
    readonly page: Page<undefined>,
  ) {}
}

/**
 * A GeoJSON FeatureCollection at the top of the body (RFC 7946, `application/geo+json`), paged the way
 * OGC API – Features pages: `links` holds `self`, `next` (the cursor in `page_after`) while more
 * remain, and `prev` (the cursor in `page_before`) when given; `numberReturned` counts the features,
 * `timeStamp` says when the page was read. `features` is JSON array text.
 */
export class FeatureCollection {
  constructor(
    readonly features: string,
    readonly numberReturned: number,
    readonly nextCursor: string | null,
    readonly prevCursor: string | null = null,
  ) {}
}

/** The paging parameters a FeatureCollection's links do not keep from the request. */
const FEATURE_LINK_DROPS = ['page_after', 'page_before'];

/**
 * A result with its entity tag, derived from the resource's version (conditional.ts): the envelope
 * interceptor sends it as ETag instead of hashing the body.
 */
export class Tagged<T> {
  constructor(
    readonly value: T,
    readonly etag: string,
  ) {}

  /** A resource tagged by its version: services speak of versions, the tag's syntax is the HTTP side's. */
  static ofVersion<T>(value: T, version: string): Tagged<T> {
    return new Tagged(value, versionEtag(version));
  }
}

/**
 * A read that can be answered 304 without being built: `etag()` is the current tag (one cheap
 * statement; undefined when there is no such resource, and `build()` will say how), `build()` the
 * whole answer. The interceptor asks `etag()` only when the request has If-None-Match.
 */
export class Conditional<T> {
  constructor(
    readonly etag: () => Promise<string | undefined>,
    readonly build: () => Promise<Tagged<T>>,
  ) {}
}

/**
 * The one way to read a versioned resource (a twin, an event, a quest): a `Conditional` whose tag is the
 * resource's version in this representation (`variant`), so a matching If-None-Match costs `version()`
 * alone. With included resources the document shows more than the version covers: it is built at once
 * and tagged by its body like any other answer.
 */
export function versionedRead<T>(read: {
  variant: string;
  includes: boolean;
  version: () => Promise<string | undefined>;
  build: () => Promise<{ value: T; version: string }>;
}): Conditional<T> | Promise<T> {
  if (read.includes) return read.build().then((built) => built.value);
  return new Conditional(
    async () => {
      const version = await read.version();
      return version === undefined ? undefined : versionEtag(version, read.variant);
    },
    async () => {
      const built = await read.build();
      return new Tagged(built.value, versionEtag(built.version, read.variant));
    },
  );
}

/** `,"included":[…]` when resources were included (an empty array too: the request asked, none were related). */
const includedMember = (text: JsonText): string => (text.included === undefined ? '' : `,"included":${text.included}`);

/**
 * The one envelope builder: a resource or list becomes `{data}` (with `included` when asked for), a
 * numbered page `{links, data, meta: {pagination}}`, a keyset page `{links, data}`, a page of the map
 * listing `{links, data: {results, meta, links}, meta}`, a FeatureCollection itself. With JsonText data
 * the envelope is written around the text.
 */
export function buildEnvelope(result: unknown, requestUrl: () => URL): unknown {
  if (result instanceof Tagged) return buildEnvelope(result.value, requestUrl);
  if (result instanceof RawBody) return result.body;
  if (result instanceof FeaturePage) {
    const links = JSON.stringify(pageLinks(requestUrl(), result.page));
    const meta = JSON.stringify(paginationMeta(result.page));
    return `{"links":${links},"data":{"results":${result.features},"meta":${meta},"links":${links}},"meta":${meta}}`;
  }
  if (result instanceof FeatureCollection) {
    const url = requestUrl();
    const links = [{ href: url.href, rel: 'self', type: GEO_JSON_MEDIA_TYPE }];
    if (result.nextCursor !== null) links.push({ href: pageUrl(url, 'page_after', FEATURE_LINK_DROPS)(result.nextCursor), rel: 'next', type: GEO_JSON_MEDIA_TYPE });
    if (result.prevCursor !== null) links.push({ href: pageUrl(url, 'page_before', FEATURE_LINK_DROPS)(result.prevCursor), rel: 'prev', type: GEO_JSON_MEDIA_TYPE });
    return `{"type":"FeatureCollection","features":${result.features},"numberReturned":${result.numberReturned},"timeStamp":"${new Date().toISOString().replace('Z', '000Z')}","links":${JSON.stringify(links)}}`;
  }
  if (result instanceof JsonText) return `{"data":${result.text}${includedMember(result)}}`;
  if (result instanceof CursorPage) return `{"links":${JSON.stringify(result.links(requestUrl()))},"data":${result.data.text}${includedMember(result.data)}}`;
  if (result instanceof Page) {
    // The absolute URL is only worked out when links need it (pages), not for every resource.
    const links = pageLinks(requestUrl(), result);
    const meta = paginationMeta(result);
    if (result.data instanceof JsonText) {
      return `{"links":${JSON.stringify(links)},"data":${result.data.text}${includedMember(result.data)},"meta":${JSON.stringify(meta)}}`;
    }
    return { links, data: result.data, meta };
  }
  return { data: result };
}
