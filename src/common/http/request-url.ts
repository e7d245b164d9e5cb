import type { FastifyRequest } from 'fastify';

/**
 * The absolute URL of a request, for links clients can follow. PUBLIC_URL wins when the service runs
 * behind a proxy that rewrites the host; otherwise the request's own protocol and Host are used.
 */
export function absoluteRequestUrl(request: FastifyRequest, publicUrl?: string): URL {
  const base = publicUrl ?? `${request.protocol}://${request.host || 'localhost'}`;
  return new URL(request.url, base.endsWith('/') ? base : `${base}/`);
}

/** Absolute URL of a path on this service, e.g. for `Location` headers. */
export function absoluteUrl(request: FastifyRequest, path: string, publicUrl?: string): string {
  return new URL(path, absoluteRequestUrl(request, publicUrl)).href;
}
