import { createHash } from 'node:crypto';

/** Largest `data` object of an event, measured as its compact JSON serialisation in UTF-8 bytes. */
export const MAX_EVENT_DATA_BYTES = 64 * 1024;

export function serializedSize(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

/** JSON with object keys sorted at every level, so equal documents hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.keys(value as Record<string, unknown>)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

/**
 * What identifies "the same request" for an idempotency key: the hash of the canonical attributes and
 * the client-generated id. `id` and `occurred` count only when given (null `occurred` is not given), so
 * a request without them hashes as it did before they existed.
 */
export function requestHash(request: { id?: string; name: string; category: string; data: Record<string, unknown>; occurred?: string | null }): string {
  return createHash('sha256')
    .update(canonicalJson({ name: request.name, category: request.category, data: request.data, id: request.id, occurred: request.occurred ?? undefined }))
    .digest('hex');
}
