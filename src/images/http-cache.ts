/**
 * Whether an `If-None-Match` header matches an entity tag (RFC 9110 13.1.2: weak comparison, a list
 * of tags or `*`).
 */
export function ifNoneMatchHits(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return (value.match(/(W\/)?"[^"]*"/g) ?? []).some((tag) => opaque(tag) === wanted);
}
