import { hash } from 'node:crypto';
import { invalidHeader } from '../json-api/api-error.js';
import type { Precondition } from '../json-api/resource.js';

/**
 * Entity tags and conditional requests (RFC 9110 §8.8.3, §13). Every GET answer carries a strong
 * ETag: resources with a version (a twin, an event, a quest: `modified` and what else their document
 * shows) derive it from that version, without building the document; every other answer from a hash of
 * its body. A compressed answer's tag gets its coding appended (`"…;br"`): the bytes differ, so the
 * strong validator must too; comparisons look through it.
 *
 *   "<version>[+<variant>][;<coding>]"     a versioned resource (the variant: its sparse fieldsets)
 *   "h<sha-1 of the body, base64url>[;<coding>]"
 */

/** The tag of an answer from its body. */
export const bodyEtag = (body: string | Buffer): string => `"h${hash('sha1', body, 'base64url')}"`;

/** The tag of a versioned resource in a representation (`variant`: '' for the full one). */
export const versionEtag = (version: string, variant = ''): string => `"${version}${variant ? `+${variant}` : ''}"`;

/** The tag with the content coding of the answer appended (the onSend hook, after compression). */
export const codedEtag = (etag: string, coding: string): string => `${etag.slice(0, -1)};${coding}"`;

const ENTITY_TAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/;

interface EntityTag {
  weak: boolean;
  /** The opaque tag without its content coding. */
  tag: string;
}

/** The entity tags of an If-None-Match / If-Match value: '*' or a list; undefined when it is malformed. */
function readTags(header: string | string[]): EntityTag[] | '*' | undefined {
  const value = (Array.isArray(header) ? header.join(',') : header).trim();
  if (value === '*') return '*';
  const tags: EntityTag[] = [];
  for (const part of value.split(',')) {
    const match = ENTITY_TAG.exec(part.trim());
    if (!match) return undefined;
    tags.push({ weak: match[1] !== undefined, tag: match[2].replace(/;[a-z]+$/, '') });
  }
  return tags.length > 0 ? tags : undefined;
}

const opaque = (etag: string) => etag.slice(1, -1).replace(/;[a-z]+$/, '');

/** Whether If-None-Match matches the current tag (weak comparison; `*` matches any); a malformed header matches nothing. */
export function ifNoneMatchHits(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const tags = readTags(header);
  if (tags === '*') return true;
  const current = opaque(etag);
  return tags?.some((t) => t.tag === current) ?? false;
}


/**
 * Reads If-Match for a write (undefined: no precondition). Strong comparison: a weak tag never matches.
 * A tag of any variant of the resource (any sparse fieldset) names its version. Malformed: a 400.
 */
export function readIfMatch(header: string | string[] | undefined): Precondition | undefined {
  if (header === undefined) return undefined;
  const tags = readTags(header);
  if (tags === undefined) throw invalidHeader('If-Match', 'If-Match must be "*" or a list of entity tags ("…"), as ETag gave them.');
  if (tags === '*') return { any: true };
  return { any: false, versions: tags.filter((t) => !t.weak).map((t) => t.tag.split('+')[0]) };
}
