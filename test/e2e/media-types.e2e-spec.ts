import { randomUUID } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { ATOMIC_MEDIA_TYPE, GEO_JSON_MEDIA_TYPE } from '../../src/common/json-api/resource';
import { OPENAPI_JSON } from '../../src/ogc/ogc.resource';
import { document, expectError, JSON_API, TestApp, TestTenant } from '../support/test-app';

/**
 * Every answer is labelled exactly as the OpenAPI document lists it: `application/vnd.api+json`,
 * `application/geo+json` and the atomic extension's `application/vnd.api+json; ext="…"`, with no
 * `charset` (JSON defines none; JSON:API allows only `ext` and `profile`), small or large (sent as
 * bytes), compressed or not. The harness also compares every answer of the e2e suite with the
 * document, parameters included (test/support/openapi-validator.ts).
 */
describe('media types: exactly as documented', () => {
  let service: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    service = await TestApp.start();
    tenant = await service.tenant({ organization: 'Labels org', twin: 'Labeller' });
  });
  afterAll(() => service.close());

  const get = (url: string, headers: Record<string, string> = {}) => service.inject({ method: 'GET', url, headers: { ...tenant.headers(), ...headers } });
  const batch = (operations: unknown[]) =>
    service.inject({
      method: 'POST',
      url: '/operations',
      headers: { ...tenant.headers(), 'content-type': ATOMIC_MEDIA_TYPE },
      payload: JSON.stringify({ 'atomic:operations': operations }),
    });
  /** `count` located twins of the tenant with long names, in one batch. */
  const addTwins = async (count: number, marker: string) => {
    const operations = Array.from({ length: count }, (_, i) => ({
      op: 'add',
      data: { type: 'twins', id: randomUUID(), attributes: { name: `${marker} ${i} ${'é'.repeat(200)}`, location: { type: 'Point', coordinates: [10 + i / 1000, 50] } } },
    }));
    const response = await batch(operations);
    expect(response.statusCode).toBe(200);
    return response;
  };

  it('labels JSON:API documents and errors application/vnd.api+json, nothing appended', async () => {
    const organization = await get(`/organizations/${tenant.organizationId}`);
    expect(organization.statusCode).toBe(200);
    expect(organization.headers['content-type']).toBe(JSON_API);
    const created = await service.inject({
      method: 'POST',
      url: '/my/twins/',
      headers: { ...tenant.headers(), 'content-type': JSON_API },
      payload: document({ type: 'twins', attributes: { name: 'Label' } }),
    });
    expect(created.statusCode).toBe(201);
    expect(created.headers['content-type']).toBe(JSON_API);
    expect((await get('/twins/00000000-0000-4000-8000-000000000000/')).headers['content-type']).toBe(JSON_API);
    expect((await service.inject({ method: 'GET', url: '/health' })).headers['content-type']).toBe(JSON_API);
    expectError(await service.inject({ method: 'GET', url: '/twins/' }), 401);
  });

  it('labels the atomic results with the extension and nothing else; its refusals are JSON:API errors', async () => {
    const response = await addTwins(1, 'atomic');
    expect(response.headers['content-type']).toBe('application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"');
    const refused = await service.inject({ method: 'POST', url: '/operations', headers: { ...tenant.headers(), 'content-type': JSON_API }, payload: '{}' });
    expectError(refused, 415);
  });

  it('labels the map listing and a track application/geo+json, small, past 64 KiB and compressed', async () => {
    const small = await get('/twins/?page_size=1', { accept: GEO_JSON_MEDIA_TYPE });
    expect(small.statusCode).toBe(200);
    expect(small.headers['content-type']).toBe('application/geo+json');

    await addTwins(250, 'big');
    const big = await get('/twins/?page_size=1000', { accept: GEO_JSON_MEDIA_TYPE });
    expect(big.rawPayload.length).toBeGreaterThan(64 * 1024);
    expect(big.headers['content-type']).toBe('application/geo+json');
    const zipped = await get('/twins/?page_size=1000', { accept: GEO_JSON_MEDIA_TYPE, 'accept-encoding': 'gzip' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers['content-type']).toBe('application/geo+json');
    expect(JSON.parse(gunzipSync(zipped.rawPayload).toString('utf8'))).toEqual(big.json());
    const page = await get('/my/twins/?page_size=100');
    expect(page.rawPayload.length).toBeGreaterThan(64 * 1024);
    expect(page.headers['content-type']).toBe(JSON_API);

    const moved = await service.inject({
      method: 'POST',
      url: `/twins/${tenant.twinId}/positions`,
      headers: { ...tenant.headers(), 'content-type': JSON_API },
      payload: JSON.stringify({ data: [{ type: 'positions', attributes: { coordinates: [2.35, 48.85], occurred: new Date().toISOString() } }] }),
    });
    expect(moved.statusCode).toBe(200);
    const track = await get(`/twins/${tenant.twinId}/track`);
    expect(track.statusCode).toBe(200);
    expect(track.headers['content-type']).toBe('application/geo+json');
  });

  it('documents those media types, and only those, for the answers that carry them', async () => {
    const doc = (await service.inject({ method: 'GET', url: '/docs-json' })).json() as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
    };
    const mediaOf = (path: string, method: string, status: string) => Object.keys(doc.paths[path][method].responses[status].content ?? {});
    expect(mediaOf('/twins', 'get', '200').sort()).toEqual([GEO_JSON_MEDIA_TYPE, JSON_API].sort());
    expect(mediaOf('/operations', 'post', '200')).toEqual([ATOMIC_MEDIA_TYPE]);
    expect(mediaOf('/twins/{id}/track', 'get', '200')).toEqual([GEO_JSON_MEDIA_TYPE]);
    const labels = new Set(Object.values(doc.paths).flatMap((item) => Object.values(item).flatMap((operation) => Object.values(operation.responses ?? {}).flatMap((response) => Object.keys(response.content ?? {})))));
    // Parameters only where the type defines them: the atomic extension's `ext`, the OpenAPI document's `version` (/ogc/api).
    expect([...labels].filter((label) => /json/.test(label) && label.includes(';')).sort()).toEqual([ATOMIC_MEDIA_TYPE, OPENAPI_JSON].sort());
  });
});
