import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject, type OperationObject, type ParameterObject, type ResponseObject } from '@nestjs/swagger';
import type { FastifyInstance } from 'fastify';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { API_POLICY } from '../http/content-security-policy.js';
import { errorResponse, RATE_LIMIT_HEADER_REFS, RATE_LIMIT_HEADERS, SECURITY } from './docs.js';
import { declaredComponents } from './schemas.js';

const DESCRIPTION = `
JSON:API service for digital twins, quests and timeline events.

**Headers.** Every request carries \`Authorization: Token <ACCESS_TOKEN>\` and \`X-Organization: <ORG_ID>\`;
quest and event requests also carry \`X-Twin: <TWIN_ID>\` (the twin the caller acts as).

**Wire conventions.** Responses are \`application/vnd.api+json\` (the twin map listing:
\`application/geo+json\`; image bytes: the image's type; the event stream: \`text/event-stream\`), errors included.
Request bodies must be \`application/vnd.api+json\` or \`application/json\` (otherwise 415; image uploads: the image's
type); bodies over 1 MiB are refused with 413 (the body is read and discarded first, so the 413 reaches
a client that is still sending); invalid JSON is a 400. Trailing slashes are optional on every path.

**Free-form JSON** (event \`data\`, twin \`meta-data\` and \`opening-hours\`) is stored and returned exactly as
sent, whatever its member names (\`__proto__\`, \`constructor\`, \`toString\`, … are ordinary data). A PATCH of
event \`data\` merges its top-level keys (null removes a key); a PATCH of a twin attribute replaces it.
Timestamps are ISO 8601 UTC with microseconds. Lists are paginated with \`page_number\` (from 1) and
\`page_size\` (default 50, max 100); a page past the last one is a 404. Links are absolute and keep the
other query parameters. The big lists also page by cursor (\`page_after\`, \`page_before\`: keyset pages,
no count, as fast deep as at the start). Reads take \`fields[<type>]\` (sparse fieldsets), and where offered
\`include\` (compound documents) and \`sort\`.

**Caching.** Every GET answer has a strong \`ETag\`; \`If-None-Match\` with it answers 304 without a body.
PATCH and DELETE of twins, quests and events take \`If-Match\`: a stale tag is a 412 (\`precondition_failed\`)
and nothing changes. JSON answers over 1 KiB are compressed for \`Accept-Encoding: br\` or \`gzip\`
(\`Vary: Accept-Encoding\`; the ETag of a compressed answer names its coding, \`"…;br"\`, and either tag
revalidates).

**Errors** are JSON:API errors documents: \`{errors: [{status, code, title, detail, source}]}\` where
\`source\` names the offending \`pointer\` (body), \`parameter\` (query) or \`header\`.
401 comes with \`WWW-Authenticate: Token\`; 429 with \`Retry-After\`; 503 (database unreachable, shutting down,
or a write rolled back after colliding with another: nothing stored) with \`Retry-After\`. A method a path does not have is a 405 with \`Allow\`; a path that does not exist, a 404.
Failures below the routes are errors documents too: 400 (a malformed URL or request), 408 (a request not
received within 30 s), 414 (a path segment over 200 characters), 417 (an \`Expect\` other than
\`100-continue\`), 431 (headers over 16 KiB).

**Rate limits.** Requests with an access token are counted per token (RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_MS,
6,000 per minute by default; public routes and the admin API are not counted). Counted answers carry
\`RateLimit-Policy: "token";q=<quota>;w=<window s>\` and \`RateLimit: "token";r=<remaining>;t=<reset s>\`
(draft-ietf-httpapi-ratelimit-headers); past the quota, 429 \`rate_limited\` with \`Retry-After\`.

**Security headers.** Every answer carries \`X-Content-Type-Options: nosniff\`, \`X-Frame-Options: DENY\`,
\`Referrer-Policy: no-referrer\` and a \`Content-Security-Policy\`: the API's answers
\`${API_POLICY}\` (nothing in them may load or run should a browser show one); the
map page (\`GET /map\` and its files) and this Swagger UI (\`/docs\`) a strict policy of their own: scripts,
styles and requests of this origin only, no inline script, no eval, no framing.

**Names.** Twin attributes are dasherized in requests and lists (\`meta-data\`, \`phone-number\`) and underscored in
the twin detail (\`meta_data\`, \`phone_number\`): the interface the clients were built on.
`;

/** Every tag an operation uses, with what it groups. */
const TAGS: [name: string, description: string][] = [
  ['twins', 'Digital twins: things, people and places acting for their owners, shown on a map.'],
  ['positions', "Where the organization's twins were: positions reported by devices, and tracks over time (GeoJSON)."],
  ['quests', 'Quests (collections of tasks), their tasks, embarking on them, and the revenue they earn.'],
  ['images', 'Image uploads (PNG, JPEG, WebP, GIF), used as quest summary images.'],
  ['events', "Timeline events of the acting twin, and their live stream."],
  ['organizations', "The caller's organizations."],
  ['webhooks', "The organization's webhooks: signed deliveries of its changes to partners' URLs (docs/WEBHOOKS.md)."],
  ['geofences', "The organization's geofences: places whose boundary a twin's position crosses, recorded as `geofence.entered` and `geofence.exited` events of its timeline."],
  ['ogc', 'The visible twins as an OGC API – Features service with CQL2 filters, for GIS clients (QGIS, GDAL, OpenLayers).'],
  ['maps', 'Vector tiles of the visible twins (Mapbox Vector Tile, TileJSON) and the map page (`GET /map`).'],
  ['admin', 'Operators: organizations, accounts and access tokens (`Authorization: Token <ADMIN_TOKEN>`).'],
  ['operations', 'Health of the service.'],
];

/**
 * Answers the HTTP layer gives on every route of a kind, whatever the handler does: declared once in
 * `components.responses` and referenced by every operation they apply to (unless the route documents
 * that status itself).
 */
const SHARED_RESPONSES: Record<string, { status: number; description: string; applies: (operation: OperationObject, method: string) => boolean }> = {
  MalformedRequest: {
    status: 400,
    description: '`bad_url` (an invalid percent-encoding in the URL), `invalid_content_length`, `bad_request` (not valid HTTP/1.1).',
    applies: () => true,
  },
  NotAuthenticated: {
    status: 401,
    description: '`not_authenticated`: missing, malformed, unknown, revoked or expired token.',
    applies: (operation) => (operation.security ?? []).length > 0,
  },
  NotFound: {
    status: 404,
    description: '`not_found`: nothing visible to the caller has this id (a path id that is not a UUID included).',
    applies: (operation) => pathParameters(operation).length > 0,
  },
  RequestTimeout: { status: 408, description: '`request_timeout`: the request was not received within REQUEST_TIMEOUT_MS (30 s).', applies: () => true },
  PayloadTooLarge: {
    status: 413,
    description: '`payload_too_large`: the request body is over BODY_LIMIT_BYTES (1 MiB; images: IMAGE_LIMIT_BYTES, 5 MiB).',
    applies: (_operation, method) => BODY_METHODS.has(method),
  },
  UriTooLong: {
    status: 414,
    description: '`uri_too_long`: a path segment is over 200 characters.',
    applies: (operation) => pathParameters(operation).length > 0,
  },
  UnsupportedMediaType: {
    status: 415,
    description: '`unsupported_media_type`: a request body that is not `application/vnd.api+json` or `application/json` (on `POST /images/`: not an image type).',
    applies: (_operation, method) => BODY_METHODS.has(method),
  },
  ExpectationFailed: { status: 417, description: '`expectation_failed`: an `Expect` header other than `100-continue`.', applies: () => true },
  TooManyRequests: {
    status: 429,
    description: '`rate_limited`: the token spent its RATE_LIMIT_MAX requests of the window; `Retry-After` says when to retry.',
    applies: (operation) => rateLimited(operation),
  },
  HeadersTooLarge: { status: 431, description: '`headers_too_large`: the request headers are over 16 KiB.', applies: () => true },
  InternalError: { status: 500, description: '`internal_error`: a bug; `X-Request-Id` finds it in the logs.', applies: () => true },
  Unavailable: {
    status: 503,
    description:
      '`database_unavailable` (the database cannot be reached, or stopped answering), `database_busy` (no database connection came free within `DATABASE_POOL_WAIT_MS`: nothing was sent to the database), `shutting_down`, or `transaction_conflict` (the write collided with a concurrent one, a deadlock, and was rolled back: nothing stored); `Retry-After: 1`, safe to retry. A write answered `database_unavailable` while the database froze may still be stored when it resumes: send an `Idempotency-Key` where a duplicate matters.',
    applies: () => true,
  },
};

const ETAG_HEADER = {
  description: 'A strong entity tag of this answer (its resource\'s version, or a hash of the body); a compressed answer\'s names its coding (`"…;br"`).',
  schema: { type: 'string' },
};

/**
 * Every GET with a JSON answer is tagged and conditional (common/http/conditional.ts, the envelope
 * interceptor): ETag on its 200, If-None-Match, and the 304 it answers (unless the route documents them).
 */
function describeConditionalGet(operation: OperationObject): void {
  const ok = operation.responses['200'] as ResponseObject | undefined;
  if (!ok?.content || !Object.keys(ok.content).some((type) => /json|vector-tile/.test(type))) return;
  ok.headers = { ETag: ETAG_HEADER, ...ok.headers };
  operation.responses['304'] ??= { description: 'Not modified: `If-None-Match` names the current `ETag` (no body).', headers: { ETag: ETAG_HEADER } };
  const parameters = (operation.parameters ??= []);
  if (!parameters.some((parameter) => 'name' in parameter && parameter.name.toLowerCase() === 'if-none-match')) {
    parameters.push({ name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' }, description: 'ETags of earlier answers (or `*`): a match is a 304.' });
  }
}

/** Rate limits count user tokens; public routes and the admin API are not counted (common/auth/guards.ts). */
const rateLimited = (operation: OperationObject) => (operation.security ?? []).some((requirement) => SECURITY.token in requirement);

/**
 * Answers past the rate-limit guard carry its fields: documented on the successful ones (2xx, 304) and
 * on the 429 (shared component); the errors of later guards and handlers carry them too, undocumented.
 */
function describeRateLimitHeaders(operation: OperationObject): void {
  for (const [status, response] of Object.entries(operation.responses)) {
    if (!response || Number(status) >= 400 || '$ref' in response) continue;
    response.headers = { ...response.headers, ...RATE_LIMIT_HEADER_REFS };
  }
}

/** Methods whose requests may carry a body that Fastify parses (so 413 and 415 apply). */
const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

const pathParameters = (operation: OperationObject) =>
  (operation.parameters ?? []).filter((parameter): parameter is ParameterObject => 'in' in parameter && parameter.in === 'path');

/**
 * The OpenAPI document of an application: what @nestjs/swagger reads from the decorators, completed with
 * the schemas the modules declare (`*.openapi.ts`) and the rules that hold for every route. Served at
 * /docs-json; `node scripts/openapi-document.mjs` writes the same document without starting a server.
 */
export function createOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Digital Twin, Quest and Timeline Event service')
    .setDescription(DESCRIPTION)
    .setVersion('1.0')
    // Relative: Swagger UI and clients talk to the host that served the document.
    .addServer('/', 'The service that serves this document')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'Authorization', description: '`Token <ACCESS_TOKEN>`' }, SECURITY.token)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Organization', description: 'The organization to act in (`<ORG_ID>`).' }, SECURITY.organization)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Twin', description: 'The twin to act as (`<TWIN_ID>`), on quest and event routes.' }, SECURITY.twin)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'Authorization', description: '`Token <ADMIN_TOKEN>` (from the environment).' }, SECURITY.admin);
  for (const [name, description] of TAGS) builder.addTag(name, description);
  const document = SwaggerModule.createDocument(app, builder.build());

  // The modules' schemas; DTO classes that refuse unknown attributes are closed.
  const declared = declaredComponents();
  const schemas = (document.components ??= {}).schemas ?? {};
  for (const [name, schema] of Object.entries(declared.schemas)) {
    if (schemas[name]) throw new Error(`OpenAPI: schema ${name} is declared twice (a DTO class of that name exists)`);
    schemas[name] = schema;
  }
  for (const name of declared.closedModels) {
    const model = schemas[name];
    if (!model || '$ref' in model) throw new Error(`OpenAPI: ${name} is not a model of the document (missing @ApiExtraModels?)`);
    model.additionalProperties = false;
  }
  document.components.schemas = schemas;

  const responses: Record<string, ResponseObject> = {};
  for (const [name, shared] of Object.entries(SHARED_RESPONSES)) responses[name] = errorResponse(shared.status, shared.description);
  document.components.responses = responses;
  document.components.headers = { ...document.components.headers, ...RATE_LIMIT_HEADERS };

  const tags = new Set(TAGS.map(([name]) => name));
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!operation) continue;
      for (const tag of operation.tags ?? []) if (!tags.has(tag)) throw new Error(`OpenAPI: tag "${tag}" of ${method.toUpperCase()} ${path} is not declared in setup.ts`);
      // Public routes say so (no global security requirement exists).
      operation.security ??= [];
      // Path ids are UUIDs everywhere (UuidParam): anything else is a 404 before any SQL. The tile
      // coordinates (integers, maps/tile.openapi.ts) and the map page's file names (an enum) keep their declarations.
      for (const parameter of pathParameters(operation)) {
        if (parameter.schema && 'type' in parameter.schema && (parameter.schema.type === 'integer' || parameter.schema.enum)) continue;
        parameter.schema = { type: 'string', format: 'uuid' };
        parameter.description ??= 'A UUID; anything else is a 404.';
      }
      for (const [name, shared] of Object.entries(SHARED_RESPONSES)) {
        if (!operation.responses[shared.status] && shared.applies(operation, method)) operation.responses[shared.status] = { $ref: `#/components/responses/${name}` };
      }
      if (method === 'get') describeConditionalGet(operation);
      if (rateLimited(operation)) describeRateLimitHeaders(operation);
      // By code unit: status codes are ASCII, and localeCompare would load ICU's collation data (~2 MB of RSS) for this alone.
      operation.responses = Object.fromEntries(Object.entries(operation.responses).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
  }
  // Only the shared responses some operation uses.
  const used = JSON.stringify(document.paths);
  for (const name of Object.keys(responses)) if (!used.includes(`"#/components/responses/${name}"`)) delete responses[name];
  return document;
}

/** Where the Swagger UI is served; the OpenAPI document is at `${DOCS_PATH}-json` (and `-yaml`). */
const DOCS_PATH = '/docs';

/**
 * The files of Swagger UI's distribution the page loads, served under /docs by name: the bundle (the
 * standalone preset and its top bar are left out: its logo is an inline style), its style sheet, the
 * distribution's page style sheet, the icons.
 */
const ASSETS: Record<string, string> = {
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/**
 * Swagger UI's page: nothing inline (its Content-Security-Policy allows scripts and styles of this
 * origin only, common/http/content-security-policy.ts), which @nestjs/swagger's own page is not (two
 * style elements and a style attribute). The same page as swagger-ui-dist's index.html.
 */
const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Digital Twin, Quest and Timeline Event service: API</title>
  <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
  <link rel="stylesheet" href="${DOCS_PATH}/index.css">
  <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-16x16.png" sizes="16x16">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
  <script src="${DOCS_PATH}/swagger-ui-init.js"></script>
</body>
</html>
`;

/**
 * Swagger UI's initializer, a file of its own: the document from /docs-json; the token and tenant
 * headers entered once survive a reload of the page (persistAuthorization); no request to swagger.io's
 * validator; the plain layout (the standalone one's top bar only holds a URL box and the logo).
 */
const INITIALIZER = `window.ui = SwaggerUIBundle(${JSON.stringify({
  url: `${DOCS_PATH}-json`,
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: true,
  validatorUrl: null,
  layout: 'BaseLayout',
})});
`;

/**
 * Swagger UI at /docs and the OpenAPI document at /docs-json. What only the documentation uses is made
 * or read when it is first asked for, not at start: the document (objects that every major collection
 * would otherwise mark for the life of the process, for a page few instances ever serve) and the UI's
 * files (read from swagger-ui-dist per request; @nestjs/swagger would register @fastify/static for them
 * at start, and with it @fastify/send, mime, glob and picomatch: docs/PERFORMANCE.md, "Memory").
 */
export function setupOpenApi(app: INestApplication): void {
  DocsModule.setupLazily(app, () => createOpenApiDocument(app));
}

class DocsModule extends SwaggerModule {
  static setupLazily(app: INestApplication, document: () => OpenAPIObject): void {
    // What SwaggerModule.setup does for the documents; the page, its initializer and files are served below.
    this.serveDocuments(DOCS_PATH, DOCS_PATH.slice(1), app.getHttpAdapter(), document, {
      ui: false,
      raw: true,
      jsonDocumentUrl: `${DOCS_PATH}-json`,
      yamlDocumentUrl: `${DOCS_PATH}-yaml`,
      swaggerOptions: {},
    });
    servePage(app.getHttpAdapter().getInstance() as FastifyInstance);
  }
}

/**
 * The page, its initializer, and Swagger UI's files from swagger-ui-dist (where @nestjs/swagger finds
 * them) by name, or the usual 404. The router prefers the initializer's own route to the parametric one.
 */
function servePage(fastify: FastifyInstance): void {
  fastify.get(DOCS_PATH, (_request, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
  fastify.get(`${DOCS_PATH}/swagger-ui-init.js`, (_request, reply) => reply.type('application/javascript; charset=utf-8').send(INITIALIZER));
  let directory: string | undefined;
  fastify.get<{ Params: { file: string } }>(`${DOCS_PATH}/:file`, async (request, reply) => {
    const { file } = request.params;
    if (!Object.hasOwn(ASSETS, file)) return reply.callNotFound();
    directory ??= (createRequire(require.resolve('@nestjs/swagger'))('swagger-ui-dist/absolute-path.js') as () => string)();
    return reply.type(ASSETS[file]).send(await readFile(join(directory, file)));
  });
}
