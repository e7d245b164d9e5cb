import { ATOMIC_MEDIA_TYPE } from '../../src/common/json-api/resource';
import { JSON_API, TestApp, TestTenant } from '../support/test-app';

/**
 * What a newcomer meets first when a request is wrong: a path id that is not a UUID is a 404 that says
 * what ids look like, and an attribute of the wrong kind is one problem with one message, on every route
 * and in a batch alike.
 */
describe('error details a newcomer can act on', () => {
  let service: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    service = await TestApp.start();
    tenant = await service.tenant({ organization: 'Details org', twin: 'Detailer' });
  });
  afterAll(() => service.close());

  const send = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, contentType = JSON_API) =>
    service.inject({ method, url, headers: { ...tenant.headers({ twin: true }), ...(body === undefined ? {} : { 'content-type': contentType }) }, payload: body === undefined ? undefined : JSON.stringify(body) });

  it.each([
    ['/twins/123/', '123'],
    ['/twins/123', '123'],
    ['/quests/not-a-quest/tasks/', 'not-a-quest'],
    ['/events/0f8fad5b-d9cb-469f-a165-70867728950', '0f8fad5b-d9cb-469f-a165-70867728950'],
    [`/twins/${'7'.repeat(60)}/`, `${'7'.repeat(40)}…`],
  ])('GET %s: a 404 saying ids are UUIDs', async (url, shown) => {
    const response = await send('GET', url);
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toBe(JSON_API);
    expect(response.json()).toEqual({
      errors: [
        {
          status: '404',
          code: 'not_found',
          title: 'Not found',
          detail: `No resource has the id "${shown}": ids are UUIDs (8-4-4-4-12 hexadecimal digits, e.g. 0f8fad5b-d9cb-469f-a165-70867728950e).`,
        },
      ],
    });
  });

  it('a well-formed id that names nothing keeps its own 404', async () => {
    const response = await send('GET', '/twins/00000000-0000-4000-8000-000000000000/');
    expect(response.statusCode).toBe(404);
    expect(response.json().errors[0].detail).toBe('No such twin.');
  });

  const oneProblem = (pointer: string, detail: string) => ({
    errors: [{ status: '400', code: 'invalid_document', title: 'Invalid request document', detail, source: { pointer } }],
  });

  it('a number as name: one problem, one message, on every route that takes a name', async () => {
    const twin = await send('POST', '/my/twins/', { data: { type: 'twins', attributes: { name: 5 } } });
    expect(twin.statusCode).toBe(400);
    expect(twin.json()).toEqual(oneProblem('/data/attributes/name', 'name must be a string'));
    const patch = await send('PATCH', `/my/twins/${tenant.twinId}/`, { data: { type: 'twins', id: tenant.twinId, attributes: { name: 5 } } });
    expect(patch.json()).toEqual(oneProblem('/data/attributes/name', 'name must be a string'));
    const event = await send('POST', '/events/', { data: { type: 'events', attributes: { name: 5, category: 'c', data: {} } } });
    expect(event.json()).toEqual(oneProblem('/data/attributes/name', 'name must be a string'));
    const quest = await send('POST', '/quests/', { data: { type: 'quests', attributes: { name: 5 } } });
    expect(quest.json()).toEqual(oneProblem('/data/attributes/name', 'name must be a string'));
    const batch = await send('POST', '/operations', { 'atomic:operations': [{ op: 'add', data: { type: 'events', attributes: { name: 5, category: 'c', data: {} } } }] }, ATOMIC_MEDIA_TYPE);
    expect(batch.json()).toEqual(oneProblem('/atomic:operations/0/data/attributes/name', 'name must be a string'));
  });

  it('several wrong attributes: one problem each, one message each', async () => {
    const response = await send('POST', '/my/twins/', { data: { type: 'twins', attributes: { name: 'x'.repeat(256), tags: 'outdoors', public: 'yes' } } });
    expect(response.statusCode).toBe(400);
    const errors = (response.json() as { errors: { detail: string; source: { pointer: string } }[] }).errors;
    expect(errors.map(({ source, detail }) => [source.pointer, detail]).sort()).toEqual(
      [
        ['/data/attributes/name', 'name must be shorter than or equal to 255 characters'],
        ['/data/attributes/public', 'public must be a boolean value'],
        ['/data/attributes/tags', 'tags must be an array'],
      ].sort(),
    );
  });
});
