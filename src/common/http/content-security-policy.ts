/**
 * The Content-Security-Policy of every answer, chosen by the route that gives it (one onSend hook,
 * app.factory.ts). The two pages hold a token (the map page in session storage, Swagger UI once a
 * user authorizes) and show what other organizations write (public twins' names reach every map):
 * their policies let nothing run but the service's own script files, and let nothing talk to
 * another origin, so markup that slipped into the page could neither run nor send the token away.
 * docs/RELIABILITY.md ("Content-Security-Policy") says what each directive protects and which
 * browser tests prove it.
 */

type Directives = Record<string, string[]>;

const serialize = (directives: Directives) =>
  Object.entries(directives)
    .map(([name, sources]) => [name, ...sources].join(' '))
    .join('; ');

/** What every page of the service shares: nothing by default, no plugins, no <base>, no form posts, no framing. */
const PAGE: Directives = {
  'default-src': ["'none'"],
  'object-src': ["'none'"],
  'base-uri': ["'none'"],
  // Both pages handle their forms in script; a form that still submitted (before the script ran) would put the token in a URL.
  'form-action': ["'none'"],
  'frame-ancestors': ["'none'"],
};

/**
 * `GET /map` and its files (`/map/assets/*`; the worker's file carries the policy the worker runs under).
 * Scripts: map.js and MapLibre GL JS's module, files of this origin, no inline script (the page has
 * none), no eval (MapLibre's ESM build needs none). Its worker is its own file of this origin, started
 * directly (MapLibre wraps a worker in a blob: URL only when it comes from another origin). Images:
 * MapLibre's control icons are data: SVGs in its style sheet, as is the page's empty icon. Styles: the
 * two style sheets; MapLibre places markers and popups through the CSSOM, which style-src leaves alone.
 */
export const MAP_PAGE_POLICY = serialize({
  ...PAGE,
  'script-src': ["'self'"],
  'worker-src': ["'self'"],
  'connect-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'style-src': ["'self'"],
});

/**
 * Swagger UI (`/docs` and its files): its bundle and initializer are files of this origin (no inline
 * script, no eval); its style sheets too (no inline style). Images: the icons are data: SVGs in its
 * style sheet; an image answer of "Try it out" is shown from a blob: URL the page makes of the bytes.
 * "Try it out" calls this origin only (the document's server is `/`).
 */
export const DOCS_POLICY = serialize({
  ...PAGE,
  'script-src': ["'self'"],
  'connect-src': ["'self'"],
  'img-src': ["'self'", 'data:', 'blob:'],
  'style-src': ["'self'"],
});

/** Everything else (JSON, GeoJSON, tiles, image bytes, errors): nothing may load, run or frame it if a browser shows it. */
export const API_POLICY = serialize({ 'default-src': ["'none'"], 'frame-ancestors': ["'none'"] });

/** The policy of an answer given by the route `route` (Fastify's pattern, undefined when no route matched). */
export function contentSecurityPolicy(route: string | undefined): string {
  const first = route?.split('/')[1];
  if (first === 'map') return MAP_PAGE_POLICY;
  if (first === 'docs') return DOCS_POLICY;
  return API_POLICY;
}
