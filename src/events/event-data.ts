import { createHash } from 'node:crypto';
import { invalidHeader } from '../common/json-api/api-error.js';

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

const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

/**
 * The `Idempotency-Key` header: absent → undefined; otherwise 1–255 printable ASCII characters
 * (surrounding spaces are not part of the key), else 400 naming the header.
 */
export function readIdempotencyKey(raw: string | string[] | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (Array.isArray(raw)) throw invalidHeader('Idempotency-Key', 'Idempotency-Key must be given once.');
  const key = raw.trim();
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw invalidHeader('Idempotency-Key', 'Idempotency-Key must be 1 to 255 printable ASCII characters.');
  }
  return key;
}
