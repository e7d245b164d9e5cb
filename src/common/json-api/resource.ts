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

export const JSON_API_MEDIA_TYPE = 'application/vnd.api+json';
export const GEO_JSON_MEDIA_TYPE = 'application/geo+json';

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
