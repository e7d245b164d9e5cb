import { invalidHeader } from '../json-api/api-error.js';

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
