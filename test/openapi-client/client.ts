import type { paths } from './api';

/**
 * A typed `fetch` for the service, written against nothing but the `paths` that openapi-typescript
 * generates from the OpenAPI document (api.d.ts): the path, the method, path parameters, query, headers
 * and request document are checked by the compiler, and the answer is typed by its status. It speaks
 * `application/vnd.api+json` and throws on any other status than the documented successes.
 */

type Method = 'get' | 'post' | 'patch' | 'delete';
type JsonApi = 'application/vnd.api+json';
type SuccessStatus = 200 | 201 | 204;

/** The operation the document has at `path` for `method`. */
type OperationAt<P extends keyof paths, M extends Method> = Exclude<paths[P][M], undefined>;

/**
 * What a request of an operation takes: its path parameters (when it has any), query, headers and request
 * document. Each test is wrapped (`[O] extends [...]`) so that it does not distribute over a union: while
 * the compiler infers the path, O can be every operation at once, and four distributed tests intersected
 * made a union of every combination (TS2590 once the document had one more query declaration).
 */
export type Input<O> = ([O] extends [{ parameters: { path: infer Path } }] ? { path: Path } : { path?: undefined }) &
  ([O] extends [{ parameters: { query?: infer Query } }] ? { query?: Query } : unknown) &
  ([O] extends [{ parameters: { header?: infer Header } }] ? { headers?: Header } : unknown) &
  ([O] extends [{ requestBody: { content: { [K in JsonApi]: infer Body } } }]
    ? { body: Body }
    : [O] extends [{ requestBody?: { content: { [K in JsonApi]: infer Body } } }]
      ? { body?: Body }
      : { body?: undefined });

/** One `{status, body}` per success the operation documents (`undefined` body for a 204). */
export type Answer<O> = O extends { responses: infer Responses }
  ? {
      [S in keyof Responses & SuccessStatus]: { status: S; body: Responses[S] extends { content: { [K in JsonApi]: infer Body } } ? Body : undefined };
    }[keyof Responses & SuccessStatus]
  : never;

/** What the implementation sees of an Input. */
interface UntypedInput {
  path?: object;
  query?: object;
  headers?: object;
  body?: unknown;
}

export type Client = ReturnType<typeof createClient>;

/** A client of the service at `baseUrl`, sending `credentials` (Authorization, X-Organization, X-Twin) with every request. */
export function createClient(baseUrl: string, credentials: Record<string, string>) {
  function request<P extends keyof paths, M extends Method>(method: M, path: P, input: Input<OperationAt<P, M>>): Promise<Answer<OperationAt<P, M>>>;
  async function request(method: Method, path: string, typed: object): Promise<{ status: number; body: unknown }> {
    const input: UntypedInput = { ...typed };
    const parameters = new Map<string, unknown>(Object.entries(input.path ?? {}));
    const url = new URL(path.replace(/\{(\w+)\}/g, (_match, name: string) => encodeURIComponent(String(parameters.get(name)))), baseUrl);
    for (const [name, value] of Object.entries(input.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = { ...credentials };
    for (const [name, value] of Object.entries(input.headers ?? {})) if (value !== undefined) headers[name] = String(value);
    if (input.body !== undefined) headers['content-type'] = 'application/vnd.api+json';
    const response = await fetch(url, { method: method.toUpperCase(), headers, body: input.body === undefined ? undefined : JSON.stringify(input.body) });
    if (!response.ok) throw new Error(`${method.toUpperCase()} ${url.pathname} answered ${response.status}: ${await response.text()}`);
    return { status: response.status, body: response.status === 204 ? undefined : await response.json() };
  }
  return request;
}
