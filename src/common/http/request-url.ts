import type { FastifyRequest } from 'fastify';

/** The base URL links are made against: PUBLIC_URL, or the request's own protocol and Host. */
const baseOf = (request: FastifyRequest, publicUrl?: string): string => {
  const base = publicUrl ?? `${request.protocol}://${request.host || 'localhost'}`;
  return base.endsWith('/') ? base : `${base}/`;
};

/**
 * The absolute URL of a request, for links clients can follow. PUBLIC_URL wins when the service runs
 * behind a proxy that rewrites the host; otherwise the request's own protocol and Host are used.
 */
export function absoluteRequestUrl(request: FastifyRequest, publicUrl?: string): URL {
  return new URL(request.url, baseOf(request, publicUrl));
}

/** Origins of the bases seen (normalised by the URL parser once each); the Host header is the client's, so bounded. */
const origins = new Map<string, string>();
const MAX_ORIGINS = 64;

function originOf(base: string): string {
  let origin = origins.get(base);
  if (origin === undefined) {
    origin = new URL(base).origin;
    if (origins.size < MAX_ORIGINS) origins.set(base, origin);
  }
  return origin;
}

/**
 * Absolute URL of a path on this service, e.g. for `Location` headers. `path` is absolute and made of
 * URL-safe characters (ids): it replaces any path of the base, as `new URL(path, base)` would, without
 * parsing two URLs per answer.
 */
export function absoluteUrl(request: FastifyRequest, path: string, publicUrl?: string): string {
  return `${originOf(baseOf(request, publicUrl))}${path}`;
}
