import vm from 'node:vm';
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { canonicalJson } from '../../src/events/event-data';
import { gif, jpeg, png, webpLossless } from '../support/images';
import { listRoutes } from '../support/routes';
import { ADMIN_TOKEN, JSON_API, TestApp } from '../support/test-app';
import { buildWorld, World } from '../support/world';

/**
 * Property-based fuzzing driven by the service's own OpenAPI document (`GET /docs-json`), as a client
 * generator would read it: every operation (path × method) is called with path parameters from the
 * caller's own world (now and then garbage), query and header parameters generated from their declared
 * schemas, the security headers its `security` entries name, and request bodies generated as VALID
 * documents from the requestBody schema (or its examples), then mutated at random paths — including
 * member names that mean something on every JavaScript object (`__proto__`, `constructor`, …).
 *
 * Invariants, per answer: never a 5xx; every 4xx is an `application/vnd.api+json` errors document whose
 * errors carry status (= the HTTP status), code, title and detail. Per successful write that carried
 * free-form JSON (event `data`, twin `meta-data`): the resource read back holds exactly that JSON (merged,
 * for an event PATCH), compared as canonical JSON text because Jest's toEqual does not see an own
 * `__proto__` member. After the run: Object.prototype (of the test realm and of Node's main realm) is
 * exactly as before. The document must also describe every route the application registers.
 *
 * The document may be imprecise (a "valid" body refused with 400 is tolerated and counted, see the
 * discrepancies printed at the end). Reproduce a run with FUZZ_SEED=<seed> (printed; FUZZ_SEED=random
 * picks one); FUZZ_SCALE=<x> multiplies the number of requests.
 */

const SEED = process.env.FUZZ_SEED === 'random' ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED ?? 20261123);
const SCALE = Number(process.env.FUZZ_SCALE ?? 1);
/**
 * Fuzzed requests at scale 1 (read-backs come on top): about 10 s on PostgreSQL, 25 s on PGlite, on two
 * cores. Grown with the operations (3,000 for the 51 before the OGC API's 8), so the writes keep their share.
 */
const REQUESTS = 3_400;

/** Never ends (server-sent events): covered by events-stream and the isolation matrix. */
const SKIPPED = new Set(['GET /events/stream']);
const JSON_MEDIA = /^application\/(.+\+)?json\b/i;
const ERRORS_MEDIA = /^application\/vnd\.api\+json/i;

// ---------------------------------------------------------------------------------------------------
// The OpenAPI document: the little of OpenAPI 3.0 this test reads
// ---------------------------------------------------------------------------------------------------

interface Schema {
  $ref?: string;
  type?: string;
  format?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  enum?: unknown[];
  allOf?: Schema[];
  nullable?: boolean;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  example?: unknown;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
  example?: unknown;
}

interface MediaType {
  schema?: Schema;
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
}

interface OperationObject {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, MediaType> };
  security?: Record<string, string[]>[];
  responses: Record<string, { content?: Record<string, unknown> }>;
}

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OperationObject>>;
  components: {
    schemas?: Record<string, Schema>;
    securitySchemes?: Record<string, { type: string; in?: string; name?: string; description?: string }>;
  };
}

interface Operation {
  /** e.g. `PATCH /events/{id}` */
  key: string;
  method: InjectOptions['method'];
  path: string;
  spec: OperationObject;
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);

function operationsOf(doc: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    if (path === '/docs' || path.startsWith('/docs-') || path.startsWith('/docs/')) continue;
    for (const [method, spec] of Object.entries(item)) {
      if (!HTTP_METHODS.has(method)) continue;
      const key = `${method.toUpperCase()} ${path}`;
      operations.push({ key, method: method.toUpperCase() as InjectOptions['method'], path, spec });
    }
  }
  return operations;
}

/** Follows `$ref`s into components.schemas and merges `allOf`, so generators see one plain schema. */
function resolve(doc: OpenApiDocument, schema: Schema | undefined, seen = new Set<string>()): Schema {
  if (!schema) return {};
  if (schema.$ref) {
    const name = schema.$ref.replace('#/components/schemas/', '');
    if (seen.has(name)) return {};
    const target = doc.components.schemas?.[name];
    if (!target) throw new Error(`openapi-fuzz: unresolvable $ref ${schema.$ref}`);
    const { $ref: _ref, ...rest } = schema;
    return resolve(doc, { ...target, ...rest }, new Set([...seen, name]));
  }
  if (schema.allOf) {
    const { allOf, ...rest } = schema;
    return allOf.map((part) => resolve(doc, part, seen)).reduce<Schema>(
      (merged, part) => ({
        ...merged,
        ...part,
        properties: { ...merged.properties, ...part.properties },
        required: [...(merged.required ?? []), ...(part.required ?? [])],
      }),
      rest,
    );
  }
  return schema;
}

/** The resource type a JSON:API document of this operation names: from its examples, else its path. */
function resourceType(op: Operation, examples: unknown[]): string {
  for (const example of examples) {
    const type = (example as { data?: { type?: unknown } } | undefined)?.data?.type;
    if (typeof type === 'string') return type;
  }
  const segments = op.path.split('/').filter((segment) => segment && !segment.startsWith('{'));
  return segments[segments.length - 1];
}

// ---------------------------------------------------------------------------------------------------
// Values: ids of the caller's world, free-form JSON, garbage
// ---------------------------------------------------------------------------------------------------

/**
 * Member names with a meaning on every JavaScript object. Inside free-form JSON they are client data
 * like any other name and must be stored and returned as sent; anywhere else they are unknown members.
 */
const PROTOTYPE_NAMES = [...Object.getOwnPropertyNames(Object.prototype), 'prototype'];
const PROTOTYPE_NAME_SET = new Set(PROTOTYPE_NAMES);

/** Classic prototype-pollution payloads, as JSON text so that `__proto__` is an own member. */
const POLLUTION_PAYLOADS: string[] = [
  '{"__proto__":{"polluted":"yes","isAdmin":true}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"__proto__":{"__proto__":{"polluted":1}},"a":1}',
  '{"prototype":{"toString":"x"},"toString":"not a function","valueOf":1,"hasOwnProperty":"x"}',
  '{"__proto__":null,"constructor":null,"toString":0}',
  '{"__proto__":[1,2],"constructor":{"name":"Object"},"__defineGetter__":{"polluted":true}}',
  '{"a":{"__proto__":{"polluted":"deep"},"b":[{"constructor":{"prototype":{"polluted":"deeper"}}}]}}',
  '{"isPrototypeOf":[],"propertyIsEnumerable":{},"toLocaleString":"","__lookupGetter__":true,"__lookupSetter__":false,"__defineSetter__":1.5}',
];

const GARBAGE_TEXT = [
  "' OR '1'='1",
  "'; DROP TABLE events; --",
  '1; SELECT pg_sleep(10)',
  '{"$ne": null}',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  '<script>alert(1)</script>',
  '../../../../etc/passwd',
  '%00',
  '\u0000',
  '\ud800',
  '🧟‍♀️🏳️‍🌈',
  'Ω'.repeat(300),
  '',
  ' ',
  'null',
  'true',
  'NaN',
  '-0',
  '1e309',
  '9007199254740993',
  '-1',
  '0',
  '2147483648',
  '00000000-0000-0000-0000-000000000000',
  '00000000-0000-4000-8000-00000000000g',
  '2026-02-30T10:00:00Z',
  '0000-01-01',
  '2026-13-01',
  '275760-09-13T00:00:00Z',
  '181,91',
  '1,2,3',
  'a'.repeat(1001),
];

/** Header values a client can really send (printable ASCII). */
const headerSafe = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 0, maxLength: 40 });
const garbageHeader = fc.oneof(
  headerSafe,
  fc.uuid(),
  fc.constantFrom('Token', 'Token ', 'Token tw_0000', 'Bearer x', `Token ${ADMIN_TOKEN}x`, '__proto__', 'null', '*', '00000000-0000-4000-8000-000000000000'),
);
const garbageText = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...GARBAGE_TEXT) }, { weight: 1, arbitrary: fc.string({ maxLength: 30 }) }, { weight: 1, arbitrary: fc.uuid() });

const memberName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) },
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '0', '1', '-1', '1e3', 'null', 'data', 'type', 'id', 'attributes', '$ref', 'a.b', 'a/b', '~0', '~1', '[0]') },
);

const scalar = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.constantFrom(...PROTOTYPE_NAMES, ...GARBAGE_TEXT.filter((s) => !s.includes('\u0000') && !/[\ud800-\udfff]/.test(s) && s.length < 100)),
);

/**
 * Any JSON value a client may legitimately put into a free-form member. Objects are built with
 * Object.fromEntries, which defines `__proto__` as an own member (an assignment would set the prototype).
 */
const { json: freeJson } = fc.letrec<{ json: unknown; array: unknown[]; object: Record<string, unknown> }>((tie) => ({
  json: fc.oneof({ maxDepth: 4, depthIdentifier: 'free-json' }, scalar, tie('array'), tie('object')),
  array: fc.array(tie('json'), { maxLength: 4, depthIdentifier: 'free-json' }),
  object: fc.array(fc.tuple(memberName, tie('json')), { maxLength: 5, depthIdentifier: 'free-json' }).map((entries) => Object.fromEntries(entries)),
}));

const freeObject: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  { weight: 5, arbitrary: fc.array(fc.tuple(memberName, freeJson), { minLength: 0, maxLength: 6 }).map((entries) => Object.fromEntries(entries)) },
  { weight: 2, arbitrary: fc.constantFrom(...POLLUTION_PAYLOADS).map((text) => JSON.parse(text) as Record<string, unknown>) },
);

/** What a mutation puts into a document: wrong types, garbage, pollution payloads, free-form JSON. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: freeJson },
  { weight: 2, arbitrary: garbageText },
  { weight: 1, arbitrary: fc.constantFrom(...POLLUTION_PAYLOADS).map((text) => JSON.parse(text) as unknown) },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, 2 ** 31, 2 ** 53, 1e308, -1e308, 1.5, true, false, null, {}, [], [null], { data: null }) },
);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Stands for the operation's path id in a generated body (the id is picked when the request is sent). */
const PATH_ID = '<<path id>>';

/** An id of the caller's world, with the twin that made it (what `X-Twin` should name to reach it). */
interface Owned {
  id: string;
  actor?: string;
}

type IdKind = 'twins' | 'organizations' | 'images' | 'quests' | 'accounts' | 'tokens' | 'events' | 'tasks' | 'webhooks' | 'geofences';

/** Which kind of id a member, parameter or JSON:API type name stands for. */
function idKind(hint: string): IdKind | undefined {
  const name = hint.toLowerCase();
  // The OGC API's one collection is the twins (`/ogc/collections/twins/items/{id}`).
  if (/twin|connection|place|personality|owned_by|owner|^ogc$/.test(name)) return 'twins';
  if (/organi[sz]ation/.test(name)) return 'organizations';
  if (/image/.test(name)) return 'images';
  if (/quest|original/.test(name)) return 'quests';
  if (/account/.test(name)) return 'accounts';
  if (/token/.test(name)) return 'tokens';
  if (/event/.test(name)) return 'events';
  if (/task/.test(name)) return 'tasks';
  if (/webhook/.test(name)) return 'webhooks';
  if (/geofence/.test(name)) return 'geofences';
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// Generators from schemas and examples
// ---------------------------------------------------------------------------------------------------

class Generators {
  constructor(
    private readonly doc: OpenApiDocument,
    /** The world as built before the run: ids for bodies and query parameters. */
    private readonly ids: Record<IdKind, string[]>,
  ) {}

  /** An id of the kind the hint names (any of the world's when it names none); unknown ids come from mutations. */
  private idArb(hint: string): fc.Arbitrary<string> {
    const kind = idKind(hint);
    return fc.constantFrom(...(kind ? this.ids[kind] : Object.values(this.ids).flat()));
  }

  /** Within minLength/maxLength; now and then at exactly the maximum. */
  private stringArb(schema: Schema, at: string[]): fc.Arbitrary<string> {
    // The id of a document is the one of the URL (JSON:API: a 409 otherwise).
    if (schema.format === 'uuid' && at.join('/') === 'data/id') return fc.constant(PATH_ID);
    if (schema.format === 'uuid') return this.idArb(at[at.length - 1] ?? '');
    if (schema.format === 'date-time') return timestamp;
    const min = Math.max(schema.minLength ?? 1, 1);
    const max = schema.maxLength ?? 40;
    const options: fc.WeightedArbitrary<string>[] = [
      { weight: 4, arbitrary: fc.string({ minLength: min, maxLength: Math.max(min, Math.min(max, 30)) }) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: min, maxLength: Math.max(min, Math.min(Math.floor(max / 8), 10)) }) },
    ];
    if (max <= 10_000) options.push({ weight: 1, arbitrary: fc.constant('é'.repeat(max)) });
    return fc.oneof(...options);
  }

  /** A value valid for `schema` (as far as the schema says); `at` is where it goes in the document. */
  value(raw: Schema | undefined, at: string[] = []): fc.Arbitrary<unknown> {
    const schema = resolve(this.doc, raw);
    const options: fc.WeightedArbitrary<unknown>[] = [];
    if (schema.example !== undefined) options.push({ weight: 1, arbitrary: this.example(schema.example) });
    const generated = this.generated(schema, at);
    // An object without members that is not declared open (additionalProperties) may well have a
    // shape the schema does not tell (a GeoJSON point): its example as often as a generated object.
    const declaredOpen = schema.additionalProperties === true;
    if (generated) options.push({ weight: schema.example === undefined ? 1 : isFreeForm(schema) && !declaredOpen ? 1 : 2, arbitrary: generated });
    if (options.length === 0) options.push({ weight: 1, arbitrary: freeJson });
    const value = fc.oneof(...options);
    return schema.nullable ? fc.option(value, { nil: null, freq: 8 }) : value;
  }

  private generated(schema: Schema, at: string[]): fc.Arbitrary<unknown> | undefined {
    if (schema.enum) return fc.constantFrom(...schema.enum);
    const type = schema.type ?? (schema.properties ? 'object' : undefined);
    switch (type) {
      case 'object': {
        if (!schema.properties || Object.keys(schema.properties).length === 0) {
          if (typeof schema.additionalProperties === 'object') {
            return fc.array(fc.tuple(memberName, this.value(schema.additionalProperties, [...at, '*'])), { maxLength: 4 }).map((entries) => Object.fromEntries(entries));
          }
          return freeObject;
        }
        const required = new Set(schema.required ?? []);
        const members = Object.entries(schema.properties).map(([name, member]) => {
          const entry = this.value(member, [...at, name]).map((value): [string, unknown] => [name, value]);
          return required.has(name) ? entry : fc.option(entry, { nil: undefined, freq: 2 });
        });
        return fc.tuple(...members).map((entries) => Object.fromEntries(entries.filter((entry): entry is [string, unknown] => entry !== undefined)));
      }
      case 'array': {
        const max = Math.min(schema.maxItems ?? 3, 3);
        return fc.array(this.value(schema.items, at), { minLength: Math.min(schema.minItems ?? 0, max), maxLength: max });
      }
      case 'string':
        return this.stringArb(schema, at);
      case 'integer':
      case 'number': {
        const min = schema.minimum ?? 0;
        const max = schema.maximum ?? Math.max(min + 1000, 1000);
        return type === 'integer' ? fc.integer({ min, max }) : fc.oneof(fc.integer({ min, max }), fc.double({ min, max, noNaN: true }));
      }
      case 'boolean':
        return fc.boolean();
      default:
        return undefined;
    }
  }

  /**
   * An example of the document, its placeholder ids (`<ORG_ID>`, the uuids of the documentation)
   * replaced by ids of the caller's world of the kind their member or resource identifier names;
   * `data.id` becomes the path id.
   */
  example(example: unknown, at: string[] = [], parent?: Record<string, unknown>): fc.Arbitrary<unknown> {
    if (typeof example === 'string' && (UUID.test(example) || /^<[A-Z_]+>$/.test(example))) {
      const name = at[at.length - 1] ?? '';
      if (at.join('/') === 'data/id') return fc.constant(PATH_ID);
      const hint = name === 'id' && typeof parent?.type === 'string' ? parent.type : name;
      return this.idArb(hint);
    }
    if (Array.isArray(example)) return fc.tuple(...example.map((item) => this.example(item, at, parent)));
    if (example && typeof example === 'object') {
      const object = example as Record<string, unknown>;
      const entries = Object.entries(object).map(([name, value]) => this.example(value, [...at, name], object).map((v): [string, unknown] => [name, v]));
      return fc.tuple(...entries).map((list) => Object.fromEntries(list));
    }
    return fc.constant(example);
  }
}

/**
 * A schema of a whole JSON:API document (`{data: {type, attributes, …}}`), as opposed to one of only
 * the attributes, which may well have an attribute called `data` itself (events do).
 */
const isDocumentSchema = (doc: OpenApiDocument, schema: Schema) => {
  const data = schema.properties?.data ? resolve(doc, schema.properties.data) : undefined;
  return !!data?.properties && ('type' in data.properties || 'attributes' in data.properties);
};

/** The attributes' schema of a request body schema, whether it describes the whole document or only them. */
const attributesSchema = (doc: OpenApiDocument, schema: Schema): Schema =>
  isDocumentSchema(doc, schema) ? resolve(doc, resolve(doc, schema.properties?.data).properties?.attributes) : schema;

/** A free-form object: an object schema that names no members. */
const isFreeForm = (schema: Schema) => (schema.type === 'object' || schema.additionalProperties === true) && Object.keys(schema.properties ?? {}).length === 0;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * ISO 8601 timestamps as clients write them: mostly this century, in every form the format allows
 * (date only, minutes, seconds, milli- or microseconds, Z, an offset or no zone). Days run to 31 in
 * every month and years from 0000 to 9999: a 31st of April or a year 0 looks like a timestamp to a
 * format check but not to PostgreSQL, which must end as a 400, not a 500.
 */
const timestamp = fc
  .tuple(
    fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 1970, max: 2100 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 9999 }) }),
    fc.integer({ min: 1, max: 12 }),
    fc.oneof(fc.integer({ min: 1, max: 28 }), fc.integer({ min: 29, max: 31 })),
    fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 999_999 })),
    fc.nat(4),
    fc.constantFrom('Z', 'Z', 'Z', '+00:00', '+05:30', '-08:00', '+0100', ''),
  )
  .map(([year, month, day, [h, m, sec, micros], form, zone]) => {
    const date = `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
    if (form === 0) return date;
    const time = [`${pad(h)}:${pad(m)}`, `${pad(h)}:${pad(m)}:${pad(sec)}`, `${pad(h)}:${pad(m)}:${pad(sec)}.${pad(Math.floor(micros / 1000), 3)}`, `${pad(h)}:${pad(m)}:${pad(sec)}.${pad(micros, 6)}`][form - 1];
    return `${date}T${time}${zone}`;
  });

// ---------------------------------------------------------------------------------------------------
// Mutations of JSON documents
// ---------------------------------------------------------------------------------------------------

type Path = (string | number)[];

interface Mutation {
  kind: 'set' | 'delete' | 'add' | 'replace-document' | 'replace-data';
  pick: number;
  name: string;
  value: unknown;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom<Mutation['kind']>('set', 'set', 'delete', 'add', 'add', 'add', 'replace-document', 'replace-data'),
  pick: fc.nat(),
  name: memberName,
  value: anyValue,
});

/** Every member path of a JSON value (arrays by index), the root excluded. */
function memberPaths(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  if (value && typeof value === 'object' && prefix.length < 8) {
    for (const [name, child] of Object.entries(value)) {
      const path = [...prefix, Array.isArray(value) ? Number(name) : name];
      out.push(path);
      memberPaths(child, path, out);
    }
  }
  return out;
}

/** Sets a member as an own data property, whatever its name (`obj.__proto__ = v` would set the prototype). */
function setMember(target: Record<string, unknown> | unknown[], name: string | number, value: unknown) {
  if (Array.isArray(target) && typeof name === 'number') target[name] = value;
  else Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
}

/** Clones through JSON text: keeps own `__proto__` members (JSON.parse defines them as own properties). */
const cloneJson = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T));

function mutate(document: unknown, m: Mutation): unknown {
  if (m.kind === 'replace-document') return m.value;
  const copy = cloneJson(document);
  if (m.kind === 'replace-data') return copy && typeof copy === 'object' && !Array.isArray(copy) ? { ...copy, data: m.value } : { data: m.value };
  const paths = memberPaths(copy);
  if (m.kind === 'add') {
    // An extra member on the document or on any object inside it.
    const objects = [[], ...paths].filter((path) => {
      const target = path.reduce<unknown>((node, segment) => (node as Record<string, unknown>)[segment], copy);
      return target && typeof target === 'object' && !Array.isArray(target);
    });
    if (objects.length === 0) return m.value;
    const path = objects[m.pick % objects.length];
    setMember(path.reduce<unknown>((node, segment) => (node as Record<string, unknown>)[segment], copy) as Record<string, unknown>, m.name, m.value);
    return copy;
  }
  if (paths.length === 0) return m.value;
  const path = paths[m.pick % paths.length];
  const parent = path.slice(0, -1).reduce<unknown>((node, segment) => (node as Record<string, unknown>)[segment], copy) as Record<string, unknown> | unknown[];
  const last = path[path.length - 1];
  if (m.kind === 'delete') {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last as string];
  } else {
    setMember(parent, last, m.value);
  }
  return copy;
}

/** Puts the request's path id where the document generator left PATH_ID. */
function withPathId(value: unknown, id: string): unknown {
  if (value === PATH_ID) return id;
  if (Array.isArray(value)) return value.map((item) => withPathId(item, id));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([name, child]) => [name, withPathId(child, id)]));
  return value;
}

/** Some member name anywhere in the value is one of Object.prototype's. */
function hasPrototypeName(value: unknown): boolean {
  if (!value || typeof value !== 'object') return false;
  return Object.entries(value).some(([name, child]) => (!Array.isArray(value) && PROTOTYPE_NAME_SET.has(name)) || hasPrototypeName(child));
}

// ---------------------------------------------------------------------------------------------------
// Requests: what fast-check generates for an operation (ids are resolved when it is sent)
// ---------------------------------------------------------------------------------------------------

/** A path parameter: the n-th id of its pool, or garbage. */
type PathChoice = { pick: number; garbage?: string };

type Body =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown; origin: 'schema' | 'example'; contentType: string; mutations: number }
  | { kind: 'bytes'; bytes: Buffer; contentType: string; mutations: number };

interface Plan {
  path: Record<string, PathChoice>;
  query: [name: string, value: string][];
  /** Declared header parameters (X-Twin, Idempotency-Key, If-None-Match, …). */
  headers: Record<string, string>;
  /** Which of the world's twins to act as when the path id does not say. */
  twin: number;
  /** Act as the twin that made the path's resource (when known) rather than `twin`. */
  asOwner: boolean;
  /** Drop a security header or send garbage in it. */
  security?: { drop: boolean; which: number; value: string };
  accept?: string;
  slash: boolean;
  body: Body;
  /** Mutated anywhere (body, query, security headers, path): false = the generated valid request. */
  mutated: boolean;
}

const IMAGE_FIXTURES: Record<string, () => Buffer> = {
  'image/png': () => png(2, 2),
  'image/gif': () => gif(2, 2),
  'image/jpeg': () => jpeg(2, 2),
  'image/webp': () => webpLossless(2, 2),
};

function bodyArbitrary(op: Operation, gen: Generators, doc: OpenApiDocument): fc.Arbitrary<Body> {
  const requestBody = op.spec.requestBody;
  if (!requestBody) return fc.constant<Body>({ kind: 'none' });
  const media = Object.entries(requestBody.content);
  const options: fc.WeightedArbitrary<Body>[] = [];

  for (const [contentType] of media.filter(([type]) => type.startsWith('image/'))) {
    const valid = IMAGE_FIXTURES[contentType] ?? (() => png(2, 2));
    options.push({
      weight: 2,
      arbitrary: fc.tuple(fc.nat(9), fc.uint8Array({ maxLength: 64 }), fc.constantFrom(...Object.keys(IMAGE_FIXTURES))).map(([odd, noise, otherType]): Body => {
        // Mostly the valid image; else truncated, random bytes, or labelled with another image type.
        if (odd < 6) return { kind: 'bytes', bytes: valid(), contentType, mutations: 0 };
        if (odd === 6) return { kind: 'bytes', bytes: valid().subarray(0, 20), contentType, mutations: 1 };
        if (odd === 7) return { kind: 'bytes', bytes: Buffer.from(noise), contentType, mutations: 1 };
        return { kind: 'bytes', bytes: valid(), contentType: otherType, mutations: otherType === contentType ? 0 : 1 };
      }),
    });
  }

  for (const [contentType, mediaType] of media.filter(([type]) => JSON_MEDIA.test(type))) {
    const schema = resolve(doc, mediaType.schema);
    const exampleValues = [
      ...(mediaType.example !== undefined ? [mediaType.example] : []),
      ...Object.values(mediaType.examples ?? {}).map((example) => example.value),
    ].filter((value) => value !== undefined);
    const documents: fc.WeightedArbitrary<{ value: unknown; origin: 'schema' | 'example' }>[] = [];
    const onlyExample = schema.example !== undefined && !schema.type && !schema.properties;
    if (onlyExample) {
      // A schema that is nothing but an example: the example is the valid document.
      documents.push({ weight: 3, arbitrary: gen.example(schema.example).map((value) => ({ value, origin: 'example' as const })) });
    } else if (mediaType.schema) {
      let generated = gen.value(schema);
      if (schema.properties && !isDocumentSchema(doc, schema)) {
        // The schema describes only the attributes: wrap them as a JSON:API document.
        const type = resourceType(op, exampleValues);
        const withId = exampleValues.some((value) => (value as { data?: { id?: unknown } })?.data?.id !== undefined) || (op.method === 'PATCH' && op.path.includes('{'));
        generated = generated.map((attributes) => ({ data: { type, ...(withId ? { id: PATH_ID } : {}), attributes } }));
      }
      documents.push({ weight: 3, arbitrary: generated.map((value) => ({ value, origin: 'schema' as const })) });
    }
    for (const value of exampleValues) documents.push({ weight: 1, arbitrary: gen.example(value).map((v) => ({ value: v, origin: 'example' as const })) });
    if (documents.length === 0) continue;
    const mutations = fc.oneof({ weight: 9, arbitrary: fc.constant<Mutation[]>([]) }, { weight: 11, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) });
    options.push({
      weight: 3,
      arbitrary: fc.tuple(fc.oneof(...documents), mutations, fc.nat(3)).map(([document, applied, typeChoice]): Body => ({
        kind: 'json',
        value: applied.reduce(mutate, document.value),
        origin: document.origin,
        // The declared media type, now and then the JSON:API one (which the service takes as well).
        contentType: typeChoice === 0 ? JSON_API : contentType,
        mutations: applied.length,
      })),
    });
  }
  if (options.length === 0) throw new Error(`openapi-fuzz: ${op.key} has a request body of no media type this test can make (${media.map(([type]) => type).join(', ')})`);
  if (!requestBody.required) options.push({ weight: 1, arbitrary: fc.constant<Body>({ kind: 'none' }) });
  return fc.oneof(...options);
}

/** A valid-looking value of a query or header parameter, from its schema, example and name. */
function parameterValue(parameter: Parameter, gen: Generators, doc: OpenApiDocument): fc.Arbitrary<string> {
  const schema = resolve(doc, parameter.schema);
  const example = parameter.example ?? schema.example;
  const options: fc.WeightedArbitrary<string>[] = [];
  if (example !== undefined) options.push({ weight: 1, arbitrary: fc.constant(String(example)) });
  const kind = idKind(parameter.name);
  if (schema.enum) options.push({ weight: 4, arbitrary: fc.constantFrom(...schema.enum.map(String)) });
  else if (schema.type === 'boolean') options.push({ weight: 4, arbitrary: fc.constantFrom('true', 'false') });
  else if (schema.type === 'number' || schema.type === 'integer') {
    const min = schema.minimum ?? 0;
    const max = schema.maximum ?? (typeof example === 'number' ? example * 4 : 1000);
    options.push({ weight: 3, arbitrary: fc.integer({ min: Math.max(min, 1), max: Math.max(min, 1) + 9 }).map(String) }, { weight: 1, arbitrary: fc.integer({ min, max }).map(String) });
  } else if (schema.format === 'uuid' || (kind && (!schema.type || schema.type === 'string'))) {
    options.push({ weight: 4, arbitrary: gen.value({ type: 'string', format: 'uuid' }, [parameter.name]).map(String) });
  } else if (schema.format === 'date-time' || (typeof example === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(example))) {
    options.push({ weight: 4, arbitrary: timestamp });
  } else if (typeof example === 'string' && /^-?[\d.]+(,-?[\d.]+)+$/.test(example)) {
    // Comma-separated numbers (a point, a bounding box): as many numbers, near the example's, or the
    // coordinates' bounds (±180 longitude, ±90 latitude: the poles and the antimeridian).
    const numbers = example.split(',').map(Number);
    const near = (n: number) => fc.double({ min: n - 1, max: n + 1, noNaN: true }).map((v) => v.toFixed(4));
    const bound = fc.constantFrom('-180', '180', '-90', '90', '0', '-179.9999', '179.9999', '89.9999', '-89.9999');
    options.push({ weight: 4, arbitrary: fc.tuple(...numbers.map((n) => fc.oneof({ weight: 4, arbitrary: near(n) }, { weight: 1, arbitrary: bound }))).map((values) => values.join(',')) });
  } else if (parameter.in === 'header') {
    options.push({ weight: 4, arbitrary: fc.oneof(fc.constantFrom('key-1', 'key-2', 'key-3'), headerSafe.filter((s) => s.trim().length > 0), fc.uuid()) });
  } else {
    options.push({ weight: 4, arbitrary: fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 })) });
  }
  return fc.oneof(...options);
}

/** One digit changed: a valid-looking value just out of range (a 30th of February, a year 0000, …). */
const changeDigit = (value: string, pick: number, digit: number) => {
  const positions = [...value].map((c, i) => (/\d/.test(c) ? i : -1)).filter((i) => i >= 0);
  if (positions.length === 0) return value;
  const at = positions[pick % positions.length];
  return value.slice(0, at) + String(digit) + value.slice(at + 1);
};

type QueryMutation = { kind: 'garbage' | 'digit' | 'unknown' | 'duplicate' | 'raw' | 'empty'; pick: number; digit: number; name: string; value: string };

const queryMutation: fc.Arbitrary<QueryMutation> = fc.record({
  kind: fc.constantFrom<QueryMutation['kind']>('garbage', 'digit', 'digit', 'unknown', 'duplicate', 'raw', 'empty'),
  pick: fc.nat(),
  digit: fc.nat(9),
  name: fc.oneof(memberName, fc.constantFrom('page[size]', 'filter[name]', 'include', 'sort', 'fields[twins]')),
  value: garbageText,
});

function mutateQuery(query: [string, string][], m: QueryMutation): [string, string][] {
  const copy = query.map(([name, value]): [string, string] => [name, value]);
  const at = copy.length ? m.pick % copy.length : -1;
  switch (m.kind) {
    case 'garbage':
      if (at >= 0) copy[at][1] = m.value;
      else copy.push([m.name, m.value]);
      break;
    case 'digit':
      if (at >= 0) copy[at][1] = changeDigit(copy[at][1], m.pick, m.digit);
      break;
    case 'unknown':
      copy.push([m.name, m.value]);
      break;
    case 'duplicate':
      if (at >= 0) copy.push([copy[at][0], m.value]);
      break;
    case 'raw':
      // Sent without percent-encoding (malformed escapes included): marked by a leading NUL, see queryString.
      copy.push([m.name, `\u0000${['%', '%zz', '%E0%A4%A', '%C0%AF', '+', '%2', 'a%00b'][m.pick % 7]}`]);
      break;
    case 'empty':
      if (at >= 0) copy[at][1] = '';
      break;
  }
  return copy;
}

/** Percent-encodes UTF-8 bytes (lone surrogates become U+FFFD, as a client's encoder would make them). */
const percentEncode = (value: string) =>
  [...Buffer.from(value, 'utf8')].map((byte) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('');

const queryString = (query: [string, string][]) =>
  query.map(([name, value]) => `${percentEncode(name)}=${value.startsWith('\u0000') ? value.slice(1) : percentEncode(value)}`).join('&');

function planArbitrary(op: Operation, gen: Generators, doc: OpenApiDocument): fc.Arbitrary<Plan> {
  const parameters = op.spec.parameters ?? [];
  const pathChoice = fc.oneof({ weight: 12, arbitrary: fc.nat().map((pick): PathChoice => ({ pick })) }, { weight: 1, arbitrary: garbageText.filter((s) => s.length > 0).map((garbage): PathChoice => ({ pick: 0, garbage })) });
  const path = fc.tuple(...parameters.filter((p) => p.in === 'path').map((p) => pathChoice.map((choice): [string, PathChoice] => [p.name, choice]))).map((entries) => Object.fromEntries(entries));

  // Declared query parameters: required ones always, optional ones now and then.
  const declared = parameters.filter((p) => p.in === 'query').map((p) => {
    const entry = parameterValue(p, gen, doc).map((value): [string, string] => [p.name, value]);
    return p.required ? entry : fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: entry });
  });
  const query = fc
    .tuple(fc.tuple(...declared), fc.oneof({ weight: 4, arbitrary: fc.constant<QueryMutation[]>([]) }, { weight: 1, arbitrary: fc.array(queryMutation, { minLength: 1, maxLength: 2 }) }))
    .map(([entries, mutations]) => ({
      query: mutations.reduce(mutateQuery, entries.filter((entry): entry is [string, string] => entry !== undefined)),
      mutated: mutations.length > 0,
    }));

  const headerParameters = parameters.filter((p) => p.in === 'header');
  const headers = fc
    .tuple(...headerParameters.map((p) => fc.option(parameterValue(p, gen, doc).map((value): [string, string] => [p.name.toLowerCase(), value]), { nil: undefined, freq: p.required ? 1000 : 2 })))
    .map((entries) => Object.fromEntries(entries.filter((entry): entry is [string, string] => entry !== undefined)));

  // Accept: one of the media types the document says a success may have (the geo listing, images).
  const answerTypes = [...new Set(Object.entries(op.spec.responses).filter(([status]) => status.startsWith('2')).flatMap(([, r]) => Object.keys(r.content ?? {})))];
  const accept = answerTypes.length > 1 ? fc.option(fc.constantFrom(...answerTypes), { nil: undefined, freq: 2 }) : fc.constant(undefined);

  // Rarely: a security header dropped or garbled (the guards' refusals are the isolation matrix's job).
  const security = fc.oneof({ weight: 15, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.record({ drop: fc.boolean(), which: fc.nat(), value: garbageHeader }) });

  return fc
    .record({ path, query, headers, twin: fc.nat(), asOwner: fc.nat(4), security, accept, slash: fc.boolean(), body: bodyArbitrary(op, gen, doc) })
    .map(({ query: q, asOwner, ...rest }): Plan => ({
      ...rest,
      query: q.query,
      asOwner: asOwner > 0,
      mutated: q.mutated || rest.security !== undefined || Object.values(rest.path).some((choice) => choice.garbage !== undefined) || (rest.body.kind !== 'none' && rest.body.mutations > 0),
    }));
}

// ---------------------------------------------------------------------------------------------------
// Free-form JSON that must come back as sent
// ---------------------------------------------------------------------------------------------------

interface RoundTrip {
  /** The attribute carrying free-form JSON in the request. */
  member: string;
  /** Its name in the write's answer and in the read-back (the twin detail uses underscored names). */
  answered: string;
  /** PATCH of event data: keys merged into the stored data (null removes a key). */
  merge: boolean;
  /** The read-back of resource `id`, with the write's own credentials. */
  read: (id: string, headers: Record<string, string>) => InjectOptions;
}

const credentials = (headers: Record<string, string>, twin: boolean) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => name === 'authorization' || name === 'x-organization' || (twin && name === 'x-twin')));

const readEvent = (id: string, headers: Record<string, string>): InjectOptions => ({ method: 'GET', url: `/events/${percentEncode(id)}`, headers: credentials(headers, true) });
const readTwin = (id: string, headers: Record<string, string>): InjectOptions => ({ method: 'GET', url: `/twins/${percentEncode(id)}/`, headers: credentials(headers, false) });

const ROUND_TRIPS: Record<string, RoundTrip> = {
  'POST /events': { member: 'data', answered: 'data', merge: false, read: readEvent },
  'PATCH /events/{id}': { member: 'data', answered: 'data', merge: true, read: readEvent },
  'POST /my/twins': { member: 'meta-data', answered: 'meta_data', merge: false, read: readTwin },
  'PATCH /my/twins/{id}': { member: 'meta-data', answered: 'meta_data', merge: false, read: readTwin },
};

/** The documented merge: top-level keys of the patch replace stored ones, null removes, others are kept. */
function merged(stored: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const result = new Map(Object.entries(stored));
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) result.delete(name);
    else result.set(name, value);
  }
  return Object.fromEntries(result);
}

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);

// ---------------------------------------------------------------------------------------------------
// Object.prototype and friends, before and after
// ---------------------------------------------------------------------------------------------------

interface PrototypeState {
  label: string;
  target: object;
  keys: (string | symbol)[];
  descriptors: Map<string | symbol, PropertyDescriptor>;
  extensible: boolean;
  prototype: object | null;
}

function prototypeState(label: string, target: object): PrototypeState {
  const keys = Reflect.ownKeys(target);
  return {
    label,
    target,
    keys,
    descriptors: new Map(keys.map((key) => [key, Object.getOwnPropertyDescriptor(target, key) as PropertyDescriptor])),
    extensible: Object.isExtensible(target),
    prototype: Object.getPrototypeOf(target) as object | null,
  };
}

/** What changed on a prototype since `before` (own keys, descriptors, extensibility, its own prototype). */
function prototypeChanges(before: PrototypeState): string[] {
  const now = prototypeState(before.label, before.target);
  const changes: string[] = [];
  const name = (key: string | symbol) => `${before.label}[${String(key)}]`;
  for (const key of now.keys) if (!before.descriptors.has(key)) changes.push(`${name(key)} added`);
  for (const [key, was] of before.descriptors) {
    const is = now.descriptors.get(key);
    if (!is) changes.push(`${name(key)} removed`);
    else {
      for (const field of ['value', 'get', 'set', 'writable', 'enumerable', 'configurable'] as const) {
        if (!Object.is(was[field], is[field])) changes.push(`${name(key)}.${field} changed`);
      }
    }
  }
  if (now.extensible !== before.extensible) changes.push(`${before.label} extensibility changed`);
  if (now.prototype !== before.prototype) changes.push(`${before.label}'s prototype changed`);
  return changes;
}

/**
 * The prototypes a polluting assignment would reach: jest runs this file and the service's modules in a
 * vm context of their own, while Node's internals (the HTTP parser, Buffer, …) live in the main realm.
 */
function watchedPrototypes(): PrototypeState[] {
  const main = vm.runInThisContext('({ object: Object.prototype, array: Array.prototype, fn: Function.prototype })') as Record<string, object>;
  const states = [
    prototypeState('Object.prototype', Object.prototype),
    prototypeState('Array.prototype', Array.prototype),
    prototypeState('Function.prototype', Function.prototype),
  ];
  if (main.object !== Object.prototype) {
    states.push(prototypeState('Object.prototype (main realm)', main.object), prototypeState('Array.prototype (main realm)', main.array), prototypeState('Function.prototype (main realm)', main.fn));
  }
  return states;
}

/** Cheap check after every request, so a pollution is pinned to the request that caused it. */
function pollutionSeen(states: PrototypeState[]): string | undefined {
  for (const state of states) {
    if (Reflect.ownKeys(state.target).length !== state.keys.length) return `${state.label} has ${Reflect.ownKeys(state.target).length} own keys, had ${state.keys.length}`;
  }
  const probe = {} as Record<string, unknown>;
  for (const name of ['polluted', 'isAdmin', 'admin', 'x']) if (probe[name] !== undefined) return `({}).${name} is ${String(probe[name])}`;
  for (const name in probe) return `({}) has an enumerable inherited member "${name}"`;
  return undefined;
}

// ---------------------------------------------------------------------------------------------------

const show = (text: string, max = 3000) => (text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text);

describe('fuzzing every operation of the OpenAPI document', () => {
  let service: TestApp;
  let world: World;
  let doc: OpenApiDocument;
  let operations: Operation[];
  let prototypes: PrototypeState[];
  const started = Date.now();

  // Figures printed at the end.
  let requests = 0;
  let readBacks = 0;
  let roundTrips = 0;
  let roundTripsWithPrototypeNames = 0;
  const statuses = new Map<number, number>();
  const statusesByOperation = new Map<string, Map<number, number>>();
  /** Generated valid (unmutated) documents the service refused: the document is imprecise there. */
  const refusedValid = new Map<string, { count: number; first: string }>();
  const undocumentedStatuses = new Map<string, Set<number>>();
  const undocumentedMediaTypes = new Map<string, Set<string>>();

  beforeAll(async () => {
    prototypes = watchedPrototypes();
    process.stdout.write(`openapi-fuzz: seed ${SEED}${process.env.FUZZ_SEED === 'random' ? ' (random: FUZZ_SEED=' + SEED + ' reproduces it)' : ''}, scale ${SCALE}\n`);
    service = await TestApp.start();
    world = await buildWorld(service, 'O');
    const answer = await service.inject({ method: 'GET', url: '/docs-json' });
    if (answer.statusCode !== 200) throw new Error(`GET /docs-json answered ${answer.statusCode}: ${answer.body.slice(0, 300)}`);
    doc = answer.json() as OpenApiDocument;
    operations = operationsOf(doc);
  }, 60_000);

  afterAll(async () => {
    const line = (entries: Iterable<[number, number]>) => [...entries].sort(([a], [b]) => a - b).map(([status, n]) => `${status}:${n}`).join(' ');
    const out: string[] = [];
    out.push('openapi-fuzz: statuses per operation:');
    for (const [key, counts] of [...statusesByOperation.entries()].sort(([a], [b]) => a.localeCompare(b))) out.push(`  ${key.padEnd(44)} ${line(counts)}`);
    if (refusedValid.size > 0) {
      out.push('openapi-fuzz: generated valid (unmutated) requests the service refused — the document is imprecise there:');
      for (const [key, { count, first }] of [...refusedValid.entries()].sort(([a], [b]) => a.localeCompare(b))) out.push(`  ${key} ×${count}: ${first}`);
    }
    if (undocumentedStatuses.size > 0) {
      out.push('openapi-fuzz: statuses the document does not list for the operation:');
      for (const [key, set] of undocumentedStatuses) out.push(`  ${key}: ${[...set].sort().join(', ')}`);
    }
    if (undocumentedMediaTypes.size > 0) {
      out.push('openapi-fuzz: success media types the document does not list:');
      for (const [key, set] of undocumentedMediaTypes) out.push(`  ${key}: ${[...set].join(', ')}`);
    }
    out.push(
      `openapi-fuzz: ${requests} requests (+${readBacks} read-backs) over ${statusesByOperation.size} operations, seed ${SEED}, ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
        `statuses ${line(statuses)}; round trips of free-form JSON checked ${roundTrips} (${roundTripsWithPrototypeNames} with Object.prototype member names); ` +
        `${prototypes?.length ?? 0} prototypes watched for pollution`,
    );
    process.stdout.write(out.join('\n') + '\n');
    await service?.close();
  });

  it('the OpenAPI document describes every route the application registers, and nothing else', () => {
    const documented = new Set(operationsOf(doc).map((op) => op.key));
    const registered = new Set(listRoutes(service.app).map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, '{$1}')}`));
    expect([...registered].filter((key) => !documented.has(key))).toEqual([]);
    expect([...documented].filter((key) => !registered.has(key))).toEqual([]);
    // The free-form members this test reads back are described as free-form objects.
    for (const [key, { member }] of Object.entries(ROUND_TRIPS)) {
      const op = operations.find((o) => o.key === key);
      expect(op).toBeDefined();
      const schema = resolve(doc, Object.values(op!.spec.requestBody?.content ?? {})[0]?.schema);
      const attributes = attributesSchema(doc, schema);
      expect({ key, freeForm: isFreeForm(resolve(doc, attributes.properties?.[member])) }).toEqual({ key, freeForm: true });
    }
  });

  it('answers every generated request without a 5xx, with JSON:API errors, and keeps free-form JSON as sent', async () => {
    // A webhook of the world's organization (an address that needs no DNS: the URL check resolves names).
    const hook = await service.inject({
      method: 'POST',
      url: '/webhooks/',
      headers: { ...world.tenant.headers(), 'content-type': 'application/vnd.api+json' },
      payload: JSON.stringify({ data: { type: 'webhooks', attributes: { url: 'https://93.184.215.14/hooks', events: ['event.created'] } } }),
    });
    if (hook.statusCode !== 201) throw new Error(`openapi-fuzz: POST /webhooks/: ${hook.statusCode} ${hook.body}`);
    const webhookId: string = hook.json().data.id;
    const ids: Record<IdKind, string[]> = {
      twins: [world.twinId, world.siblingTwinId, world.publicTwinId],
      organizations: [world.organizationId],
      images: [world.privateImageId, world.publicImageId],
      quests: [world.privateQuestId, world.publicQuestId, world.copyQuestId],
      accounts: [world.accountId],
      tokens: [world.secondTokenId],
      events: world.eventIds,
      tasks: [world.privateTaskId],
      webhooks: [webhookId],
      geofences: [world.geofenceId],
    };
    const gen = new Generators(doc, ids);

    // Path ids: the world's, plus every resource the run creates (each with the twin that made it).
    // The tenant's own token is never in the pool: revoking it would end the run's authentication.
    const pools: Record<IdKind, Owned[]> = {
      twins: ids.twins.map((id) => ({ id })),
      organizations: [{ id: world.organizationId }],
      images: ids.images.map((id) => ({ id })),
      quests: [
        { id: world.privateQuestId, actor: world.twinId },
        { id: world.publicQuestId, actor: world.publicTwinId },
        { id: world.copyQuestId, actor: world.siblingTwinId },
      ],
      accounts: [{ id: world.accountId }],
      tokens: [{ id: world.secondTokenId }],
      events: world.eventIds.map((id) => ({ id, actor: world.twinId })),
      tasks: [{ id: world.privateTaskId, actor: world.twinId }],
      webhooks: [{ id: webhookId }],
      geofences: [{ id: world.geofenceId }],
    };
    const poolFor = (op: Operation, parameter: string): Owned[] => {
      const first = op.path.split('/').filter((s) => s && s !== 'my')[0];
      const kind = parameter === 'id' ? idKind(first) : idKind(parameter);
      if (!kind) throw new Error(`openapi-fuzz: no ids for path parameter {${parameter}} of ${op.key}: add a rule to idKind`);
      return pools[kind];
    };

    /** The header each security scheme names, with the caller's credential for it. */
    const credential = (scheme: string, actor: string): [string, string] => {
      const definition = doc.components.securitySchemes?.[scheme];
      if (!definition || definition.type !== 'apiKey' || definition.in !== 'header' || !definition.name) {
        throw new Error(`openapi-fuzz: security scheme ${scheme} is not an API key header: add a rule`);
      }
      const header = definition.name.toLowerCase();
      if (header === 'authorization') return [header, /admin/i.test(`${scheme} ${definition.description ?? ''}`) ? `Token ${ADMIN_TOKEN}` : `Token ${world.tenant.token}`];
      if (header === 'x-organization') return [header, world.organizationId];
      if (header === 'x-twin') return [header, actor];
      throw new Error(`openapi-fuzz: no credential for security header ${definition.name} (${scheme})`);
    };

    const planned = operations.filter((op) => !SKIPPED.has(op.key));
    const weight = (op: Operation) => (ROUND_TRIPS[op.key] ? 12 : op.method === 'GET' ? 2 : op.path.startsWith('/admin/') ? 1.5 : op.spec.requestBody ? 3 : 2);
    const total = planned.reduce((sum, op) => sum + weight(op), 0);
    // Operations interleave (so writes meet the resources earlier writes made); fast-check's
    // counterexample names the operation by its key rather than printing its whole description.
    const byKey = new Map(planned.map((op) => [op.key, op]));
    const arbitrary = fc.oneof(...planned.map((op) => ({ weight: Math.round((weight(op) / total) * 1000), arbitrary: planArbitrary(op, gen, doc).map((plan) => ({ key: op.key, plan })) })));

    /**
     * Failures are collected rather than ending the run at the first, so one run shows every distinct
     * problem (by operation and kind; the first occurrence in full). The run is sequential and its
     * choices come from the seed, so FUZZ_SEED reproduces it.
     */
    const failures = new Map<string, { count: number; first: string }>();
    const record = (key: string, error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      const signature = `${key}: ${message.split('\n')[0].replace(/\s+\S*\d\S*/g, ' …').slice(0, 120)}`;
      const entry = failures.get(signature) ?? { count: 0, first: message };
      entry.count++;
      failures.set(signature, entry);
    };

    const send = async (options: InjectOptions) => service.inject(options);

    /** The invariants every answer must hold; the message carries the whole exchange. */
    const checkAnswer = (op: Operation, options: InjectOptions, response: LightMyRequestResponse, what = 'request') => {
      const status = response.statusCode;
      const exchange = () =>
        `${what} ${options.method} ${show(String(options.url), 500)} (${op.key})\n  headers ${JSON.stringify(options.headers)}\n  body ${show(String(options.payload ?? ''))}\n` +
        `→ ${status} ${String(response.headers['content-type'] ?? '')}\n  answer ${show(response.body)}`;
      if (status >= 500) throw new Error(`server error:\n${exchange()}`);
      if (status >= 400) {
        if (!ERRORS_MEDIA.test(String(response.headers['content-type']))) throw new Error(`error answer not application/vnd.api+json:\n${exchange()}`);
        let body: { errors?: unknown };
        try {
          body = response.json();
        } catch {
          throw new Error(`error answer is not JSON:\n${exchange()}`);
        }
        if (!Array.isArray(body.errors) || body.errors.length === 0) throw new Error(`not a JSON:API errors document:\n${exchange()}`);
        for (const error of body.errors as Record<string, unknown>[]) {
          if (error?.status !== String(status) || typeof error.code !== 'string' || typeof error.title !== 'string' || typeof error.detail !== 'string') {
            throw new Error(`malformed error object ${JSON.stringify(error)}:\n${exchange()}`);
          }
        }
      }
      const polluted = pollutionSeen(prototypes);
      if (polluted) throw new Error(`prototype pollution (${polluted}) after:\n${exchange()}`);
      return exchange;
    };

    const execute = async (op: Operation, plan: Plan) => {
      // Path: ids from the pools (garbage now and then); the twin that made the resource acts, mostly.
      let actor: string | undefined;
      let pathId = '';
      const url =
        op.path.replace(/\{(\w+)\}/g, (_match, name: string) => {
          const choice = plan.path[name] ?? { pick: 0 };
          const declared = resolve(doc, (op.spec.parameters ?? []).find((p) => p.in === 'path' && p.name === name)?.schema);
          if (choice.garbage !== undefined) pathId = choice.garbage;
          else if (declared?.enum) {
            // Names from a list (the map page's files), and one that is not in it.
            pathId = String([...declared.enum, 'no-such-name'][choice.pick % (declared.enum.length + 1)]);
          } else if (declared?.type === 'integer') {
            // Coordinates (a tile's z/x/y): within the declared range and one past it.
            pathId = String(choice.pick % ((declared.maximum ?? 64) + 2));
          } else {
            const pool = poolFor(op, name);
            const entry = pool[choice.pick % pool.length];
            pathId = entry.id;
            actor = entry.actor ?? actor;
          }
          return percentEncode(pathId);
        }) +
        (plan.slash && op.path !== '/' ? '/' : '') +
        (plan.query.length > 0 ? `?${queryString(plan.query)}` : '');
      const twin = plan.asOwner && actor ? actor : ids.twins[plan.twin % ids.twins.length];

      // Security headers from the operation's first requirement, then the declared header parameters.
      const headers: Record<string, string> = {};
      const requirement = op.spec.security?.[0] ?? {};
      for (const scheme of Object.keys(requirement)) {
        const [name, value] = credential(scheme, twin);
        headers[name] = value;
      }
      const securityHeaders = Object.keys(headers);
      if (plan.security && securityHeaders.length > 0) {
        const name = securityHeaders[plan.security.which % securityHeaders.length];
        if (plan.security.drop) delete headers[name];
        else headers[name] = plan.security.value;
      }
      Object.assign(headers, plan.headers);
      if (plan.accept) headers.accept = plan.accept;

      let payload: string | Buffer | undefined;
      let sent: unknown;
      if (plan.body.kind === 'json') {
        payload = JSON.stringify(withPathId(plan.body.value, pathId)) ?? 'null';
        // What the service receives: parsed from the very text sent (own `__proto__` members included).
        sent = JSON.parse(payload);
        headers['content-type'] = plan.body.contentType;
      } else if (plan.body.kind === 'bytes') {
        payload = plan.body.bytes;
        headers['content-type'] = plan.body.contentType;
      }
      const options: InjectOptions = { method: op.method, url, headers, ...(payload !== undefined ? { payload } : {}) };

      // For a merge, what was stored before (sequential requests: nothing else changes it meanwhile).
      const roundTrip = ROUND_TRIPS[op.key];
      const sentMember = roundTrip && isObject(sent) && isObject(sent.data) && isObject(sent.data.attributes) ? sent.data.attributes[roundTrip.member] : undefined;
      let before: Record<string, unknown> | undefined;
      if (roundTrip?.merge && sentMember !== undefined) {
        const read = roundTrip.read(pathId, headers);
        const answer = await send(read);
        readBacks++;
        checkAnswer(op, read, answer, 'read before the merge');
        if (answer.statusCode === 200) before = answer.json().data.attributes[roundTrip.answered] as Record<string, unknown>;
      }

      requests++;
      const response = await send(options);
      const status = response.statusCode;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      const byOperation = statusesByOperation.get(op.key) ?? new Map<number, number>();
      byOperation.set(status, (byOperation.get(status) ?? 0) + 1);
      statusesByOperation.set(op.key, byOperation);
      const exchange = checkAnswer(op, options, response);

      // Where the document and the service disagree (reported, not failed: another issue fixes the document).
      if (!op.spec.responses[String(status)] && !op.spec.responses.default) {
        undocumentedStatuses.set(op.key, (undocumentedStatuses.get(op.key) ?? new Set()).add(status));
      }
      if (status === 400 && !plan.mutated) {
        const origin = plan.body.kind === 'json' ? ` (${plan.body.origin})` : '';
        const error = (response.json() as { errors: { detail: string; source?: unknown }[] }).errors[0];
        const entry = refusedValid.get(op.key + origin) ?? { count: 0, first: `${error.detail} ${JSON.stringify(error.source ?? {})} ← ${show(String(payload ?? url), 300)}` };
        entry.count++;
        refusedValid.set(op.key + origin, entry);
      }
      if (status >= 300) return;
      // The label as sent, parameters included (the atomic results' `ext`), against the document's; a text
      // type's charset is its own (as in the harness, test/support/openapi-validator.ts).
      const given = String(response.headers['content-type'] ?? '');
      const label = /^text\//i.test(given) ? given.replace(/\s*;\s*charset=[^;]*/i, '') : given;
      const mediaType = label.split(';')[0].trim();
      const documentedTypes = Object.keys(op.spec.responses[String(status)]?.content ?? {});
      if (label && !documentedTypes.includes(label)) undocumentedMediaTypes.set(op.key, (undocumentedMediaTypes.get(op.key) ?? new Set()).add(`${status} ${label}`));
      if (status === 204 || !JSON_MEDIA.test(mediaType)) return;

      let answer: { data?: { type?: string; id?: string; attributes?: Record<string, unknown> } };
      try {
        answer = response.json();
      } catch {
        throw new Error(`a ${status} with a JSON media type whose body is not JSON:\n${exchange()}`);
      }
      // Every created resource joins the pool of its kind, with the twin that made it.
      const resource = answer.data;
      if (status === 201 && resource?.id && resource.type) {
        const kind = idKind(resource.type);
        if (kind && !pools[kind].some((entry) => entry.id === resource.id)) pools[kind].push({ id: resource.id, actor: headers['x-twin'] });
      }

      if (!roundTrip || sentMember === undefined || sentMember === null || !resource?.id) return;
      if (roundTrip.merge && !isObject(before)) {
        throw new Error(`the event could not be read before the PATCH, yet the PATCH succeeded:\n${exchange()}`);
      }
      const expected = canonicalJson(roundTrip.merge ? merged(before as Record<string, unknown>, sentMember as Record<string, unknown>) : sentMember);
      const echoed = canonicalJson(resource.attributes?.[roundTrip.answered]);
      // An idempotent replay answers the first answer again: the stored event may have changed since.
      const replayed = response.headers['idempotent-replayed'] === 'true';
      if (!roundTrip.merge && echoed !== expected) {
        throw new Error(`the answer does not carry "${roundTrip.member}" as sent:\n  expected ${show(expected)}\n  answered ${show(echoed)}\n${exchange()}`);
      }
      if (replayed) return;
      const read = roundTrip.read(resource.id, headers);
      const readAnswer = await send(read);
      readBacks++;
      checkAnswer(op, read, readAnswer, 'read-back');
      if (readAnswer.statusCode !== 200) throw new Error(`read-back answered ${readAnswer.statusCode} ${readAnswer.body}:\n${exchange()}`);
      const stored = readAnswer.json().data as { attributes: Record<string, unknown> };
      const readValue = canonicalJson(stored.attributes[roundTrip.answered]);
      if (readValue !== expected) {
        throw new Error(
          `"${roundTrip.member}" read back is not what was ${roundTrip.merge ? 'merged' : 'sent'}:\n  expected ${show(expected)}\n  read     ${show(readValue)}` +
            `${roundTrip.merge ? `\n  stored before ${show(canonicalJson(before))}` : ''}\n${exchange()}\n  read-back ${show(readAnswer.body)}`,
        );
      }
      if (echoed !== readValue) throw new Error(`the write answered "${roundTrip.answered}" ${show(echoed)} but ${show(readValue)} is stored:\n${exchange()}`);
      // The whole resource: what the write answered is what a read finds.
      if (canonicalJson(resource) !== canonicalJson(stored)) {
        throw new Error(`the write's answer and the read-back differ:\n  answered ${show(canonicalJson(resource))}\n  read     ${show(canonicalJson(stored))}\n${exchange()}`);
      }
      roundTrips++;
      if (hasPrototypeName(sentMember)) roundTripsWithPrototypeNames++;
    };

    await fc.assert(
      fc.asyncProperty(arbitrary, async ({ key, plan }) => {
        try {
          await execute(byKey.get(key) as Operation, plan);
        } catch (error) {
          record(key, error);
        }
      }),
      { numRuns: Math.max(1, Math.round(REQUESTS * SCALE)), seed: SEED },
    );
    if (failures.size > 0) {
      const report = [...failures.entries()].map(([signature, { count, first }], i) => `#${i + 1} ${signature} (×${count})\n${first}`);
      throw new Error(`${failures.size} distinct problems (seed ${SEED}):\n\n${report.join('\n\n')}`);
    }

    if (SCALE >= 1) {
      // Every operation was exercised, and the free-form round trips really happened, odd names included.
      for (const op of planned) expect({ op: op.key, requests: [...(statusesByOperation.get(op.key)?.values() ?? [])].reduce((a, b) => a + b, 0) > 0 }).toEqual({ op: op.key, requests: true });
      expect(roundTrips).toBeGreaterThan(100);
      expect(roundTripsWithPrototypeNames).toBeGreaterThan(20);
    }
  }, 600_000);

  it('left Object.prototype (and Array.prototype, Function.prototype) untouched, in both realms', () => {
    expect(prototypes.flatMap(prototypeChanges)).toEqual([]);
    const probe = {} as Record<string, unknown>;
    expect([probe.polluted, probe.isAdmin, probe.admin]).toEqual([undefined, undefined, undefined]);
    expect(Object.keys(Object.getPrototypeOf(probe) as object)).toEqual([]);
    const main = vm.runInThisContext('(() => { const o = {}; const seen = []; for (const k in o) seen.push(k); return { polluted: o.polluted, isAdmin: o.isAdmin, seen }; })()') as Record<string, unknown>;
    expect(main).toEqual({ polluted: undefined, isAdmin: undefined, seen: [] });
  });
});
