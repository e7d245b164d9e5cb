import type { IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

/**
 * Checks answers of the service against its own OpenAPI document (`GET /docs-json`): the operation is
 * found by method and path, then the status must be documented for it, the media type must be one the
 * documented response lists (no body where it lists none), and a JSON body must validate against that
 * media type's schema (ajv + ajv-formats). Bodies that are not JSON (image bytes, event streams) are
 * checked for their media type only. Answers of paths the document does not have (`/docs`, an unknown
 * path) are skipped; a method the document does not list for a known path must be an errors document
 * (the 405 every such request gets).
 *
 * test/support/test-app.ts runs every answer of the e2e suite through it, on by default;
 * OPENAPI_VALIDATION=off turns it off.
 */

export const validationEnabled = () => process.env.OPENAPI_VALIDATION !== 'off';

interface Schema {
  $ref?: string;
  [keyword: string]: unknown;
}

interface MediaType {
  schema?: Schema;
  example?: unknown;
  examples?: Record<string, { value?: unknown } | { $ref: string }>;
}

interface Response {
  $ref?: string;
  description?: string;
  content?: Record<string, MediaType>;
}

export interface Operation {
  parameters?: { name: string; in: string }[];
  requestBody?: { required?: boolean; content: Record<string, MediaType> };
  responses: Record<string, Response>;
  security?: Record<string, string[]>[];
  tags?: string[];
}

export interface OpenApiDocument {
  openapi: string;
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas?: Record<string, Schema>; responses?: Record<string, Response>; securitySchemes?: Record<string, { name?: string; in?: string }> };
}

/** An answer as seen on the wire. `body` is undefined when it was not captured (a stream still open). */
export interface Answer {
  method: string;
  url: string;
  status: number;
  contentType?: string;
  /** Content-Encoding of the body (br, gzip): it is decoded before it is checked. */
  contentEncoding?: string;
  body?: Buffer;
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const JSON_MEDIA = /^application\/(?:[\w.+-]+\+)?json$/;
/** How every errors document is labelled. */
const ERRORS_MEDIA_TYPE = 'application/vnd.api+json';
/** The verdict on an answer outside the document. */
const SKIPPED = Symbol('skipped');
/** Where the document's component schemas live for ajv. */
const COMPONENTS_ID = 'https://twin-service.invalid/openapi/components.json';

interface Route {
  method: string;
  path: string;
  segments: (string | null)[];
  operation: Operation;
}

export interface ValidationStats {
  validated: number;
  skipped: number;
}

export class OpenApiValidator {
  private readonly ajv: Ajv;
  /** The same schemas with a resource's members optional: answers to requests with a sparse fieldset (`fields[<type>]`). */
  private readonly sparseAjv: Ajv;
  private readonly routes: Route[] = [];
  private readonly paths: { segments: (string | null)[] }[] = [];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly document: OpenApiDocument) {
    // OpenAPI 3.0 schemas are JSON Schema with a few extra keywords: `nullable` (ajv knows it) and
    // annotations ajv must accept in strict mode.
    this.ajv = schemaValidator(document.components.schemas ?? {});
    this.sparseAjv = schemaValidator(withOptionalMembers(document.components.schemas ?? {}));
    for (const [path, item] of Object.entries(document.paths)) {
      const segments = templateSegments(path);
      this.paths.push({ segments });
      for (const [method, operation] of Object.entries(item)) {
        if (HTTP_METHODS.includes(method)) this.routes.push({ method: method.toUpperCase(), path, segments, operation });
      }
    }
    // Static segments win over parameters (`/events/stream` before `/events/{id}`), as in the router.
    this.routes.sort((a, b) => staticCount(b.segments) - staticCount(a.segments));
  }

  /** The operation the document has for this request, if any. */
  route(method: string, url: string): Route | undefined {
    const segments = requestSegments(url);
    return this.routes.find((route) => route.method === method.toUpperCase() && matches(route.segments, segments));
  }

  /** A validator for a schema of the document (cached by `key`); `sparse`: with the resources' members optional. */
  validatorFor(key: string, schema: Schema, sparse = false): ValidateFunction {
    const cacheKey = `${sparse ? 'sparse ' : ''}${key}`;
    let validate = this.compiled.get(cacheKey);
    if (!validate) {
      validate = (sparse ? this.sparseAjv : this.ajv).compile(rewriteRefs(schema));
      this.compiled.set(cacheKey, validate);
    }
    return validate;
  }

  /** The response object of a status, `$ref`s resolved. */
  response(operation: Operation, status: number): Response | undefined {
    const found = operation.responses[String(status)] ?? operation.responses[`${String(status)[0]}XX`] ?? operation.responses.default;
    if (!found?.$ref) return found;
    return this.document.components.responses?.[found.$ref.replace('#/components/responses/', '')];
  }

  /** What is wrong with an answer, or undefined when it is described or outside the document (counted in `stats`). */
  check(answer: Answer, stats: ValidationStats = { validated: 0, skipped: 0 }): string | undefined {
    const verdict = this.verdict(answer);
    if (verdict === SKIPPED) stats.skipped++;
    else if (verdict === undefined) stats.validated++;
    return verdict === SKIPPED ? undefined : verdict;
  }

  private verdict(answer: Answer): string | typeof SKIPPED | undefined {
    const method = answer.method.toUpperCase();
    // HEAD answers carry no body; Fastify makes them from the GET routes, which are checked.
    if (method === 'HEAD') return SKIPPED;
    const route = this.route(method, answer.url);
    const mediaType = answer.contentType ? mediaTypeOf(answer.contentType) : undefined;
    if (!route) {
      const segments = requestSegments(answer.url);
      if (!this.paths.some((path) => matches(path.segments, segments)) || answer.status < 400) return SKIPPED;
      // A method the path does not have: the 405 errors document (or another error before routing).
      if (mediaType !== ERRORS_MEDIA_TYPE) return this.fail(answer, `${method} ${answer.url} (not in the document)`, `an errors document is ${ERRORS_MEDIA_TYPE}, got ${mediaType ?? 'no Content-Type'}`);
      return this.checkBody(answer, `${method} ${answer.url} (not in the document)`, 'ErrorDocument', { $ref: '#/components/schemas/ErrorDocument' }, mediaType?.split(';')[0]);
    }
    const key = `${method} ${route.path}`;
    const response = this.response(route.operation, answer.status);
    if (!response) return this.fail(answer, key, `status ${answer.status} is not documented (documented: ${Object.keys(route.operation.responses).join(', ')})`);
    const content = response.content ?? {};
    if (Object.keys(content).length === 0) {
      if (answer.body && answer.body.length > 0) return this.fail(answer, key, `the document says no body for ${answer.status}, got ${answer.body.length} bytes of ${mediaType}`);
      return undefined;
    }
    if (!mediaType) {
      if (answer.body !== undefined && answer.body.length === 0) return this.fail(answer, key, `no body, but the document describes ${Object.keys(content).join(', ')}`);
      return this.fail(answer, key, 'no Content-Type');
    }
    const media = Object.entries(content).find(([documented]) => mediaTypeOf(documented) === mediaType)?.[1];
    if (!media) return this.fail(answer, key, `media type ${mediaType} is not documented for ${answer.status} (documented: ${Object.keys(content).join(', ')})`);
    if (!JSON_MEDIA.test(mediaType.split(';')[0]) || !media.schema) {
      return undefined;
    }
    return this.checkBody(answer, key, `${key} ${answer.status} ${mediaType}`, media.schema, mediaType.split(';')[0]);
  }

  private checkBody(answer: Answer, key: string, cacheKey: string, schema: Schema, mediaType: string | undefined): string | undefined {
    if (mediaType === undefined || !JSON_MEDIA.test(mediaType)) return this.fail(answer, key, `expected a JSON body, got ${mediaType ?? 'no Content-Type'}`);
    // A stream still open (not captured): its media type is all there is to check.
    if (answer.body === undefined) {
      return undefined;
    }
    let body: unknown;
    try {
      body = JSON.parse(decoded(answer.body, answer.contentEncoding).toString('utf8'));
    } catch {
      return this.fail(answer, key, `the ${mediaType} body is not JSON`);
    }
    const sparse = /[?&]fields(?:\[|%5b)/i.test(answer.url);
    const validate = this.validatorFor(cacheKey, schema, sparse);
    if (!validate(body)) return this.fail(answer, key, `the body does not match the schema:\n${describeErrors(validate.errors ?? [])}`);
    return undefined;
  }

  private fail(answer: Answer, key: string, problem: string): string {
    const body = answer.body === undefined ? '(not captured)' : answer.body.length > 2000 ? `${answer.body.subarray(0, 2000).toString('utf8')}…` : answer.body.toString('utf8');
    return `OpenAPI: the answer to ${answer.method} ${answer.url} (${key}) is not what the document describes: ${problem}\n  → ${answer.status} ${answer.contentType ?? ''}\n  ${body}`;
  }
}

export const describeErrors = (errors: ErrorObject[]) =>
  errors
    .slice(0, 10)
    .map((error) => `    ${error.instancePath || '(body)'} ${error.message ?? ''} ${error.params && Object.keys(error.params).length > 0 ? JSON.stringify(error.params) : ''}`)
    .join('\n');

/** A body as its coding left it, decoded (compressed answers are checked as the documents they carry). */
function decoded(body: Buffer, coding: string | undefined): Buffer {
  if (coding === 'br') return brotliDecompressSync(body);
  if (coding === 'gzip') return gunzipSync(body);
  return body;
}

/** An ajv holding the document's component schemas. */
function schemaValidator(schemas: Record<string, Schema>): Ajv {
  // OpenAPI 3.0 schemas are JSON Schema with a few extra keywords: `nullable` (ajv knows it) and
  // annotations ajv must accept in strict mode.
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
  ajv.addVocabulary(['example', 'xml', 'externalDocs']);
  addFormats(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: rewriteRefs(schemas) });
  return ajv;
}

/**
 * The resource schemas as a sparse fieldset makes them: any attribute or relationship may be absent, and
 * `relationships` too (representation.ts). Everything else stays exact (types, no unknown members).
 */
function withOptionalMembers(schemas: Record<string, Schema>): Record<string, Schema> {
  const relaxed: Record<string, Schema> = {};
  for (const [name, schema] of Object.entries(schemas)) {
    const properties = (schema as { properties?: Record<string, Schema> }).properties;
    if (!properties?.attributes || !properties.type) {
      relaxed[name] = schema;
      continue;
    }
    const optional = (member: Schema | undefined) => (member && typeof member === 'object' ? { ...member, required: undefined } : member);
    relaxed[name] = JSON.parse(
      JSON.stringify({
        ...schema,
        required: ((schema as { required?: string[] }).required ?? []).filter((member) => member !== 'relationships'),
        properties: { ...properties, attributes: optional(properties.attributes), relationships: optional(properties.relationships) },
      }),
    );
  }
  return relaxed;
}

/** `$ref`s into `#/components/schemas/` pointed at the copy ajv holds. */
function rewriteRefs<T>(value: T): T {
  if (Array.isArray(value)) return value.map(rewriteRefs) as T;
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([name, child]) => [
      name,
      name === '$ref' && typeof child === 'string' && child.startsWith('#/components/schemas/')
        ? `${COMPONENTS_ID}#/$defs/${child.slice('#/components/schemas/'.length)}`
        : rewriteRefs(child),
    ]),
  ) as T;
}

/** `/events/{id}` → ['events', null]. */
const templateSegments = (path: string) =>
  path
    .split('/')
    .filter(Boolean)
    .map((segment) => (/^\{[^}]+\}$/.test(segment) ? null : segment));

/** The path of a request URL, its trailing slash ignored (as the router does). */
const requestSegments = (url: string) => url.split('?')[0].split('#')[0].split('/').filter(Boolean);

const matches = (template: (string | null)[], segments: string[]) =>
  template.length === segments.length && template.every((segment, i) => segment === null || segment === segments[i]);

const staticCount = (segments: (string | null)[]) => segments.filter((segment) => segment !== null).length;

/**
 * Watches the answers a listening server sends (requests by `fetch` or raw sockets in e2e tests, which
 * do not pass through TestApp.inject), capturing status, media type and, for JSON, the body. `onAnswer`
 * gets each answer once it is complete, or once its connection closed (a stream: no body captured).
 */
export function observeServer(server: Server, onAnswer: (answer: Answer) => void, maxBodyBytes = 16 * 1024 * 1024): void {
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    let status: number | undefined;
    let headers: OutgoingHttpHeaders = {};
    const chunks: Buffer[] = [];
    let captured = 0;
    let capturing = true;
    let reported = false;
    const contentType = () => String(headers['content-type'] ?? response.getHeader('content-type') ?? '') || undefined;

    const writeHead = response.writeHead;
    response.writeHead = function (this: ServerResponse, statusCode: number, ...rest: unknown[]) {
      status = statusCode;
      const given = rest.find((argument) => argument && typeof argument === 'object');
      headers = { ...response.getHeaders(), ...lowerCaseHeaders(given) };
      return (writeHead as (...args: unknown[]) => ServerResponse).call(this, statusCode, ...rest);
    } as ServerResponse['writeHead'];

    const keep = (chunk: unknown, encoding?: unknown) => {
      if (!capturing || chunk === undefined || chunk === null || typeof chunk === 'function') return;
      const type = contentType();
      if (type && !JSON_MEDIA.test(type.split(';')[0].trim().toLowerCase())) {
        capturing = false;
        chunks.length = 0;
        return;
      }
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
      captured += buffer.length;
      if (captured > maxBodyBytes) {
        capturing = false;
        chunks.length = 0;
      } else chunks.push(buffer);
    };
    const write = response.write;
    response.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as ServerResponse['write'];
    const end = response.end;
    response.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    } as ServerResponse['end'];

    const report = (complete: boolean) => {
      if (reported || !response.headersSent) return;
      reported = true;
      const type = contentType();
      const json = type !== undefined && JSON_MEDIA.test(type.split(';')[0].trim().toLowerCase());
      onAnswer({
        method: request.method ?? 'GET',
        url: request.url ?? '/',
        status: status ?? response.statusCode,
        contentType: type,
        contentEncoding: headers['content-encoding'] === undefined ? undefined : String(headers['content-encoding']),
        body: complete && (capturing || !json) ? Buffer.concat(chunks) : undefined,
      });
    };
    response.once('finish', () => report(true));
    response.once('close', () => report(false));
  });
}

function lowerCaseHeaders(given: unknown): OutgoingHttpHeaders {
  if (!given || typeof given !== 'object') return {};
  if (Array.isArray(given)) {
    const out: OutgoingHttpHeaders = {};
    for (let i = 0; i + 1 < given.length; i += 2) out[String(given[i]).toLowerCase()] = given[i + 1] as string;
    return out;
  }
  return Object.fromEntries(Object.entries(given as Record<string, unknown>).map(([name, value]) => [name.toLowerCase(), value as string]));
}

/**
 * A media type as compared with the document: the type and every parameter as sent, so JSON:API's `ext`
 * (the atomic operations' media type) must be documented as sent and a parameter the document does not
 * list (a `charset` on JSON, which defines none) is a mismatch, as a contract-checking proxy sees it.
 * Only text types may add their `charset`, which belongs to them (`text/event-stream; charset=utf-8`).
 */
function mediaTypeOf(contentType: string): string {
  const [type, ...parameters] = contentType.split(';').map((part) => part.trim());
  const text = /^text\//i.test(type);
  const kept = parameters.filter((parameter) => parameter !== '' && !(text && /^charset\s*=/i.test(parameter))).map((parameter) => parameter.replace(/\s*=\s*/, '='));
  return [type.toLowerCase(), ...kept].join('; ');
}
