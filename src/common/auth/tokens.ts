import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A token is 32 bytes from the CSPRNG, base64url, prefixed so leaked tokens are recognisable in scans. */
export const TOKEN_PREFIX = 'tw_';

export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Compares two secrets through their digests, in time independent of where they differ. */
export function secretsEqual(given: string, expected: string): boolean {
  return timingSafeEqual(hashToken(given), hashToken(expected));
}

const AUTHORIZATION = /^Token ([A-Za-z0-9_\-.~+/=]{1,512})$/i;

/** The token of an `Authorization: Token <ACCESS_TOKEN>` header, or undefined when malformed. */
export function parseAuthorization(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  return AUTHORIZATION.exec(header.trim())?.[1];
}
