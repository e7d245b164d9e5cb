import http from 'node:http';

/** Exports of `node:http` that are lazy getters of Node's bundled undici, which the service never uses. */
export const UNDICI_HTTP_EXPORTS = ['WebSocket', 'CloseEvent', 'MessageEvent'] as const;

/**
 * Removes `http.WebSocket`, `http.CloseEvent` and `http.MessageEvent` from `node:http`'s exports. An ES
 * module that imports `node:http` (@nestjs/core does) reads every export of it, and these three are getters
 * that load and run Node's whole bundled undici (~0.8 MB of source): ~6 MB more resident memory for code
 * nothing here calls (docs/PERFORMANCE.md, "Memory"). Run before the first ES module imports `node:http`;
 * the globals (`globalThis.WebSocket`, `fetch`) are untouched and still load undici when first used.
 */
export function dropUnusedHttpExports(): void {
  for (const name of UNDICI_HTTP_EXPORTS) {
    if (Object.getOwnPropertyDescriptor(http, name)?.get) delete (http as unknown as Record<string, unknown>)[name];
  }
}
