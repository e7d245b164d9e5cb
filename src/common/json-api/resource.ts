/** Shapes of the JSON:API documents this service writes. */
export interface ResourceIdentifier {
  type: string;
  id: string;
}

export interface Relationship {
  data: ResourceIdentifier | ResourceIdentifier[] | null;
  meta?: Record<string, unknown>;
  links?: Record<string, string>;
}

export interface ResourceObject {
  type: string;
  id: string;
  attributes: Record<string, unknown>;
  relationships?: Record<string, Relationship>;
  links?: Record<string, string>;
  meta?: Record<string, unknown>;
}

/**
 * What a write requires of the resource's current version (If-Match, read by common/http/conditional.ts):
 * that it exists (`any`), or that its version is one of `versions`.
 */
export type Precondition = { any: true } | { any: false; versions: string[] };

/**
 * The media types of the service's answers, exactly as the OpenAPI document lists them: JSON:API
 * documents, the atomic operations' results (JSON:API with the extension's `ext` parameter, as the
 * extension requires) and GeoJSON (the map listing, a twin's track).
 */
export const JSON_API_MEDIA_TYPE = 'application/vnd.api+json';
export const ATOMIC_EXTENSION = 'https://jsonapi.org/ext/atomic';
export const ATOMIC_MEDIA_TYPE = `${JSON_API_MEDIA_TYPE}; ext="${ATOMIC_EXTENSION}"`;
export const GEO_JSON_MEDIA_TYPE = 'application/geo+json';

/** What Fastify appends to the label of JSON text it sends (reply.send, for any `…json` media type). */
const APPENDED_CHARSET = '; charset=utf-8';
const JSON_MEDIA = /^application\/(?:[\w.-]+\+)?json(?:;|$)/i;

/**
 * An answer's Content-Type as the handler set it, for one Fastify relabelled as `<type>; charset=utf-8`;
 * undefined when it is already exact. JSON (RFC 8259), GeoJSON (RFC 7946) and JSON:API define no
 * charset parameter (JSON is UTF-8), and JSON:API allows no parameter but `ext` and `profile`: a client
 * or proxy matching the label against the OpenAPI document must find it there as it is. Text types
 * (`text/event-stream`, the map page's HTML) keep their charset, which is theirs.
 */
export function exactMediaType(contentType: unknown): string | undefined {
  if (typeof contentType !== 'string' || !contentType.endsWith(APPENDED_CHARSET) || !JSON_MEDIA.test(contentType)) return undefined;
  return contentType.slice(0, -APPENDED_CHARSET.length);
}

/** `{type, id}` or null when there is no id. */
export function identifier(type: string, id: string | null | undefined): ResourceIdentifier | null {
  return id ? { type, id } : null;
}

/**
 * Primary data as JSON text PostgreSQL built (a resource object, or an array of them), and the JSON
 * array text of the resources included with it (`include`): both go into the envelope as they are,
 * never parsed and serialized again here.
 */
export class JsonText {
  constructor(
    readonly text: string,
    readonly included?: string,
  ) {}
}
