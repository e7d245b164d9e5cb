import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { InjectOptions } from 'fastify';
import { CLIENT_CHOSEN_EXAMPLE_ID, EXAMPLE_IDS } from '../../src/common/openapi/example-ids';
import { createOpenApiDocumentOffline } from '../../src/app.openapi';
import { createClient } from '../openapi-client/client';
import { scenario } from '../openapi-client/scenario';
import { gif, jpeg, png, webpLossless } from '../support/images';
import { HTTP_METHODS, type OpenApiDocument, OpenApiValidator, type Operation, describeErrors } from '../support/openapi-validator';
import { ADMIN_TOKEN, document, JSON_API, TestApp, type TestTenant } from '../support/test-app';
import { ATOMIC_MEDIA_TYPE } from '../../src/operations/atomic-document';

/**
 * The OpenAPI document (`GET /docs-json`) is the truth for every operation: this file checks the document
 * itself (media types, errors, tags, examples against their schemas, the Swagger UI options), sends every
 * request example it carries with real ids and expects each to be accepted, and runs a client written
 * against the types openapi-typescript generates from it. Every answer of these requests, like every
 * answer of the whole e2e suite, is also validated against the document by the harness (TestApp).
 */

const JSON_MEDIA = /^application\/(?:[\w.+-]+\+)?json$/;
const IMAGE_FIXTURES: Record<string, () => Buffer> = { 'image/png': () => png(3, 2), 'image/jpeg': () => jpeg(3, 2), 'image/webp': () => webpLossless(3, 2), 'image/gif': () => gif(3, 2) };

type Kind = keyof typeof EXAMPLE_IDS;
const KINDS = Object.keys(EXAMPLE_IDS) as Kind[];

interface Case {
  key: string;
  path: string;
  method: string;
  operation: Operation;
}

function operations(doc: OpenApiDocument): Case[] {
  const found: Case[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (HTTP_METHODS.includes(method)) found.push({ key: `${method.toUpperCase()} ${path}`, path, method: method.toUpperCase(), operation });
    }
  }
  return found;
}

/** Example values of a media type object (`example` and every `examples` entry), by name. */
const examplesOf = (media: { example?: unknown; examples?: Record<string, unknown> }): [string, unknown][] => [
  ...(media.example !== undefined ? [['example', media.example] as [string, unknown]] : []),
  ...Object.entries(media.examples ?? {}).map(([name, example]): [string, unknown] => [name, (example as { value?: unknown }).value]),
];

const KIND_OF_ID = new Map<string, Kind>(KINDS.map((kind) => [EXAMPLE_IDS[kind], kind]));

/** The example with every documentation id replaced by the real id of its type. */
function withIds(value: unknown, ids: Record<Kind, string>): unknown {
  if (typeof value === 'string') {
    if (value === CLIENT_CHOSEN_EXAMPLE_ID) return randomUUID();
    const kind = KIND_OF_ID.get(value);
    return kind ? ids[kind] : value;
  }
  if (Array.isArray(value)) return value.map((item) => withIds(item, ids));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([name, child]) => [name, withIds(child, ids)]));
  return value;
}

/** `/quests/{questId}/tasks` → the kind of each path parameter: the collection before it. */
const pathKinds = (path: string): Record<string, Kind> => {
  const segments = path.split('/').filter(Boolean);
  const kinds: Record<string, Kind> = {};
  segments.forEach((segment, i) => {
    const name = /^\{(\w+)\}$/.exec(segment)?.[1];
    if (!name) return;
    const kind = segments[i - 1] as Kind;
    if (!KINDS.includes(kind)) throw new Error(`openapi-contract: no ids for {${name}} of ${path}`);
    kinds[name] = kind;
  });
  return kinds;
};

describe('the OpenAPI document is the truth', () => {
  let service: TestApp;
  let doc: OpenApiDocument;
  let validator: OpenApiValidator;
  let tenant: TestTenant;
  let imageId: string;

  beforeAll(async () => {
    // The webhook examples name partner.example.com, which need not resolve where the tests run.
    // Retention 0: the documented positions keep their dates, and are accepted whenever this runs.
    service = await TestApp.start({ WEBHOOKS_ALLOW_PRIVATE: 'true', POSITION_RETENTION_DAYS: '0' });
    const answer = await service.inject({ method: 'GET', url: '/docs-json' });
    expect(answer.statusCode).toBe(200);
    doc = answer.json() as OpenApiDocument;
    validator = new OpenApiValidator(doc);
    tenant = await service.tenant({ organization: 'Contract organization' });
    const image = await service.inject({ method: 'POST', url: '/images/', headers: { ...tenant.headers(), 'content-type': 'image/png' }, payload: png(4, 4) });
    imageId = image.json().data.id;
  });

  afterAll(async () => {
    await service?.close();
  });

  /** Fresh resources for one request: a quest and an event of the tenant's twin (a PATCH may start or delete them). */
  async function freshIds(): Promise<Record<Kind, string>> {
    const twinHeaders = { ...tenant.headers({ twin: true }), 'content-type': JSON_API };
    const quest = await service.inject({ method: 'POST', url: '/quests/', headers: twinHeaders, payload: document({ type: 'quests', attributes: { name: 'Contract quest' } }) });
    const event = await service.inject({ method: 'POST', url: '/events/', headers: twinHeaders, payload: document({ type: 'events', attributes: { name: 'contract', category: 'test', data: {} } }) });
    const token = await service.inject({ method: 'POST', url: `/admin/accounts/${tenant.accountId}/tokens/`, headers: { authorization: `Token ${ADMIN_TOKEN}` } });
    const webhook = await service.inject({
      method: 'POST',
      url: '/webhooks/',
      headers: { ...tenant.headers(), 'content-type': JSON_API },
      payload: document({ type: 'webhooks', attributes: { url: 'https://partner.example.com/hooks', events: ['event.created'] } }),
    });
    const geofence = await service.inject({
      method: 'POST',
      url: '/geofences/',
      headers: { ...tenant.headers(), 'content-type': JSON_API },
      payload: document({ type: 'geofences', attributes: { name: 'Contract place', geometry: { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 0]]] } } }),
    });
    return {
      organizations: tenant.organizationId,
      accounts: tenant.accountId,
      twins: tenant.twinId,
      images: imageId,
      quests: quest.json().data.id,
      events: event.json().data.id,
      tokens: token.json().data.id,
      webhooks: webhook.json().data.id,
      geofences: geofence.json().data.id,
      // No request example names a task.
      tasks: EXAMPLE_IDS.tasks,
    };
  }

  /** The security headers of an operation's first requirement, with the tenant's credentials. */
  function credentials(operation: Operation): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const scheme of Object.keys(operation.security?.[0] ?? {})) {
      const name = doc.components.securitySchemes?.[scheme]?.name?.toLowerCase();
      if (scheme === 'AdminToken') headers.authorization = `Token ${ADMIN_TOKEN}`;
      else if (name === 'authorization') headers.authorization = `Token ${tenant.token}`;
      else if (name === 'x-organization') headers['x-organization'] = tenant.organizationId;
      else if (name === 'x-twin') headers['x-twin'] = tenant.twinId;
      else throw new Error(`openapi-contract: no credential for security scheme ${scheme}`);
    }
    return headers;
  }

  async function send(entry: Case, body: { contentType: string; payload: string | Buffer } | undefined, ids: Record<Kind, string>) {
    const kinds = pathKinds(entry.path);
    const url = entry.path.replace(/\{(\w+)\}/g, (_match, name: string) => ids[kinds[name]]);
    const options: InjectOptions = {
      method: entry.method as InjectOptions['method'],
      url,
      headers: { ...credentials(entry.operation), ...(body ? { 'content-type': body.contentType } : {}) },
      ...(body ? { payload: body.payload } : {}),
    };
    return service.inject(options);
  }

  describe('the document', () => {
    it('is the one scripts/openapi-document.mjs writes for the linters and the client generator (no server needed)', async () => {
      expect(JSON.parse(JSON.stringify(await createOpenApiDocumentOffline()))).toEqual(doc);
    });

    it('declares every tag it uses, each with a description', () => {
      const declared = new Map((doc.tags ?? []).map((tag) => [tag.name, tag.description]));
      const used = new Set(operations(doc).flatMap(({ operation }) => operation.tags ?? []));
      expect([...used].filter((tag) => !declared.get(tag))).toEqual([]);
      expect([...declared.keys()].filter((tag) => !used.has(tag))).toEqual([]);
    });

    it('describes the errors of every operation as JSON:API errors documents', () => {
      for (const { key, operation } of operations(doc)) {
        const statuses = Object.keys(operation.responses);
        expect({ key, has4xx: statuses.some((status) => status.startsWith('4')), has503: statuses.includes('503') }).toEqual({ key, has4xx: true, has503: true });
        for (const status of statuses.filter((status) => Number(status) >= 400)) {
          const content = validator.response(operation, Number(status))?.content ?? {};
          expect({ key, status, types: Object.keys(content) }).toEqual({ key, status, types: [JSON_API] });
          const schema = JSON.stringify(content[JSON_API].schema);
          expect({ key, status, errors: schema.includes('#/components/schemas/ErrorDocument') }).toEqual({ key, status, errors: true });
        }
        if (operation.security?.length) expect({ key, has401: statuses.includes('401') }).toEqual({ key, has401: true });
        if (/\{\w+\}/.test(key)) expect({ key, has404: statuses.includes('404'), has414: statuses.includes('414') }).toEqual({ key, has404: true, has414: true });
        if (operation.requestBody) expect({ key, has413: statuses.includes('413'), has415: statuses.includes('415') }).toEqual({ key, has413: true, has415: true });
      }
    });

    it('names the media types the service sends and takes', () => {
      // The OGC API answers what GIS clients read: JSON, GeoJSON, JSON Schema and OpenAPI documents.
      const OGC_MEDIA_TYPES: Record<string, string[]> = {
        'GET /ogc': ['application/json'],
        'GET /ogc/api': ['application/vnd.oai.openapi+json;version=3.0'],
        'GET /ogc/conformance': ['application/json'],
        'GET /ogc/collections': ['application/json'],
        'GET /ogc/collections/twins': ['application/json'],
        'GET /ogc/collections/twins/queryables': ['application/json', 'application/schema+json'],
        'GET /ogc/collections/twins/items': ['application/geo+json'],
        'GET /ogc/collections/twins/items/{id}': ['application/geo+json'],
      };
      for (const { key, operation } of operations(doc)) {
        for (const [status, response] of Object.entries(operation.responses).filter(([status]) => status.startsWith('2'))) {
          const types = Object.keys(response.content ?? {}).sort();
          const expected =
            key === 'GET /twins'
              ? ['application/geo+json', JSON_API]
              : key === 'GET /images/{imageId}/content'
                ? ['image/gif', 'image/jpeg', 'image/png', 'image/webp']
                : key === 'GET /events/stream'
                  ? ['text/event-stream']
                  : status === '204'
                    ? []
                    : key === 'GET /twins/tiles/{z}/{x}/{y}.mvt'
                      ? ['application/vnd.mapbox-vector-tile']
                      : key === 'GET /twins/tiles.json'
                        ? ['application/json']
                        : key === 'GET /map'
                          ? ['text/html']
                          : key === 'GET /map/assets/{asset}'
                            ? ['application/geo+json', 'text/css', 'text/javascript']
                            : key === 'POST /operations'
                              ? [ATOMIC_MEDIA_TYPE]
                              : key === 'GET /twins/{id}/track'
                                ? ['application/geo+json']
                                : key.startsWith('GET /ogc')
                                  ? OGC_MEDIA_TYPES[key]
                                  : [JSON_API];
          expect({ key, status, types }).toEqual({ key, status, types: expected });
        }
        if (operation.requestBody) {
          const types = Object.keys(operation.requestBody.content).sort();
          const takes = key === 'POST /images' ? ['image/gif', 'image/jpeg', 'image/png', 'image/webp'] : key === 'POST /operations' ? [ATOMIC_MEDIA_TYPE] : ['application/json', JSON_API];
          expect({ key, types }).toEqual({ key, types: takes });
        }
      }
    });

    it('describes every request body as a whole JSON:API document, with examples', () => {
      for (const { key, operation } of operations(doc)) {
        for (const [type, media] of Object.entries(operation.requestBody?.content ?? {}).filter(([type]) => JSON_MEDIA.test(type))) {
          const name = media.schema?.$ref?.replace('#/components/schemas/', '') ?? '';
          type Resource = { required?: string[]; items?: { $ref?: string } };
          const schema = doc.components.schemas?.[name] as { required?: string[]; properties?: { data?: Resource } } | undefined;
          // `data` is a resource object, or an array of them (an upload of positions).
          const items = schema?.properties?.data?.items?.$ref?.replace('#/components/schemas/', '');
          const resource = (items ? doc.components.schemas?.[items] : schema?.properties?.data) as Resource | undefined;
          expect({ key, type, document: schema?.required, data: resource?.required?.includes('type') }).toEqual({ key, type, document: ['data'], data: true });
          expect({ key, type, examples: examplesOf(media).length > 0 }).toEqual({ key, type, examples: true });
        }
      }
    });

    it('has examples that match their schemas, requests and responses', () => {
      const problems: string[] = [];
      let checked = 0;
      const check = (where: string, media: { schema?: { $ref?: string }; example?: unknown; examples?: Record<string, unknown> }) => {
        if (!media.schema) return;
        for (const [name, value] of examplesOf(media)) {
          const validate = validator.validatorFor(`${where} example`, media.schema);
          checked++;
          if (!validate(value)) problems.push(`${where} example "${name}":\n${describeErrors(validate.errors ?? [])}`);
        }
      };
      for (const { key, operation } of operations(doc)) {
        for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) if (JSON_MEDIA.test(type)) check(`${key} request ${type}`, media);
        for (const status of Object.keys(operation.responses)) {
          for (const [type, media] of Object.entries(validator.response(operation, Number(status))?.content ?? {})) if (JSON_MEDIA.test(type)) check(`${key} ${status} ${type}`, media);
        }
      }
      expect(problems).toEqual([]);
      expect(checked).toBeGreaterThan(30);
    });

    it('serves Swagger UI keeping the authorization across reloads (persistAuthorization)', async () => {
      const init = await service.inject({ method: 'GET', url: '/docs/swagger-ui-init.js' });
      expect(init.statusCode).toBe(200);
      expect(init.body).toMatch(/"persistAuthorization":\s*true/);
    });

    it('is what the checked-in client types (test/openapi-client/api.d.ts) were generated from', () => {
      // The script makes the document without a server; the first test shows it is this one.
      const root = join(__dirname, '..', '..');
      expect(() => execFileSync(process.execPath, [join(root, 'scripts', 'openapi-client-check.mjs'), '--types-only'], { cwd: root, stdio: 'pipe' })).not.toThrow();
    }, 60_000);
  });

  describe('the harness validator', () => {
    const detail = (attributes: Record<string, unknown>) =>
      Buffer.from(JSON.stringify({ data: { type: 'organizations', id: EXAMPLE_IDS.organizations, attributes: { name: 'x', created: '2026-11-21T19:26:03.123456Z', modified: '2026-11-21T19:26:03.123456Z', ...attributes } } }));
    const answer = (status: number, contentType: string | undefined, body: Buffer, url = `/organizations/${EXAMPLE_IDS.organizations}`, method = 'GET') => ({ method, url, status, contentType, body });

    it('accepts an answer the document describes, and skips paths outside it', () => {
      expect(validator.check(answer(200, JSON_API, detail({})))).toBeUndefined();
      expect(validator.check(answer(200, 'text/html', Buffer.from('<html>'), '/docs'))).toBeUndefined();
    });

    it.each([
      ['an attribute the document does not list', answer(200, JSON_API, detail({ secret: 'x' })), /must NOT have additional properties.*secret/],
      ['a timestamp without microseconds', answer(200, JSON_API, detail({ created: '2026-11-21T19:26:03Z' })), /pattern/],
      ['a status the operation does not list', answer(418, JSON_API, Buffer.from('{"errors":[]}')), /status 418 is not documented/],
      ['another media type', answer(200, 'application/json', detail({})), /media type application\/json is not documented/],
      ['a parameter the document does not list', answer(200, `${JSON_API}; charset=utf-8`, detail({})), /media type application\/vnd\.api\+json; charset=utf-8 is not documented/],
      ['an errors document of a path outside the operations, labelled otherwise', answer(405, `${JSON_API}; charset=utf-8`, Buffer.from('{"errors":[]}'), '/organizations/', 'PUT'), /an errors document is application\/vnd\.api\+json/],
      ['a body where the document says none', answer(204, JSON_API, Buffer.from('{}'), `/events/${EXAMPLE_IDS.events}`, 'DELETE'), /no body/],
      ['a 405 that is not an errors document', answer(405, JSON_API, Buffer.from('{"error":"nope"}'), '/organizations/', 'PUT'), /does not match/],
    ])('refuses %s', (_what, given, expected) => {
      expect(validator.check(given)).toMatch(expected);
    });
  });

  describe('every request example, sent with real ids, is accepted', () => {
    it('JSON:API documents, as application/vnd.api+json and as application/json', async () => {
      const results: string[] = [];
      const refused: string[] = [];
      const sent = new Set<string>();
      for (const entry of operations(doc)) {
        for (const [type, media] of Object.entries(entry.operation.requestBody?.content ?? {}).filter(([type]) => JSON_MEDIA.test(type))) {
          for (const [name, example] of examplesOf(media)) {
            const ids = await freshIds();
            const response = await send(entry, { contentType: type, payload: JSON.stringify(withIds(example, ids)) }, ids);
            const line = `${entry.key} ${type} "${name}" → ${response.statusCode}`;
            results.push(line);
            sent.add(entry.key);
            if (response.statusCode < 200 || response.statusCode >= 300) refused.push(`${line}: ${response.body}`);
          }
        }
      }
      expect(refused).toEqual([]);
      // Every operation taking a JSON:API document had examples to send.
      const writes = operations(doc).filter(({ operation }) => Object.keys(operation.requestBody?.content ?? {}).some((type) => JSON_MEDIA.test(type)));
      expect([...sent].sort()).toEqual(writes.map(({ key }) => key).sort());
      process.stdout.write(`openapi-contract: ${results.length} request examples accepted:\n  ${results.join('\n  ')}\n`);
    });

    it('image uploads, in each image media type the document lists', async () => {
      const entry = operations(doc).find(({ key }) => key === 'POST /images')!;
      const types = Object.keys(entry.operation.requestBody?.content ?? {});
      expect(types.length).toBe(4);
      for (const type of types) {
        const response = await send(entry, { contentType: type, payload: IMAGE_FIXTURES[type]() }, await freshIds());
        expect({ type, status: response.statusCode }).toEqual({ type, status: 201 });
      }
    });

    it('optional request bodies may be left out', async () => {
      const optional = operations(doc).filter(({ operation }) => operation.requestBody && !operation.requestBody.required);
      expect(optional.map(({ key }) => key)).toEqual(expect.arrayContaining(['DELETE /events/{id}', 'POST /admin/accounts/{accountId}/tokens']));
      for (const entry of optional) {
        const response = await send(entry, undefined, await freshIds());
        expect({ key: entry.key, ok: response.statusCode >= 200 && response.statusCode < 300 }).toEqual({ key: entry.key, ok: true });
      }
    });
  });

  describe('a client generated from the document (openapi-typescript)', () => {
    it('runs a whole scenario against the service, typed end to end', async () => {
      await service.app.listen(0, '127.0.0.1');
      const base = `http://127.0.0.1:${(service.app.getHttpServer().address() as AddressInfo).port}`;
      const result = await scenario((headers) => createClient(base, headers), tenant.token, tenant.organizationId);
      expect(result).toEqual(
        expect.objectContaining({
          phone: '+33 1 00 00 00 00',
          suppliedTasks: 0,
          openingHours: [],
          category: 'sport',
          published: false,
          prices: [1.5],
          total: 0,
          deleted: true,
        }),
      );
      expect(result.listedPhones).toContain('+33 1 00 00 00 00');
      expect(result.timestamps).toHaveLength(1);
    });
  });
});
