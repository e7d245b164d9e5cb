import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { document, expectError, JSON_API, TestApp, TestTenant } from '../support/test-app';
import { QuestClient } from '../support/quests';

/**
 * Sparse fieldsets, include, sort and keyset pages (docs/API.md, "Reading less, reading more"), through
 * the HTTP stack, on every list that offers them.
 */
describe('JSON:API reach: fields[], include, sort, keyset pages', () => {
  let service: TestApp;
  let owner: TestTenant;
  let other: TestTenant;
  let q: QuestClient;
  const twinIds: string[] = [];

  const get = (tenant: TestTenant, url: string, twin: string | boolean = false) => service.inject({ method: 'GET', url, headers: tenant.headers({ twin }) });
  const ok = (response: LightMyRequestResponse) => {
    if (response.statusCode !== 200) throw new Error(`expected 200, got ${response.statusCode}: ${response.body} ${service.logs.slice(-3).join('')}`);
    return response.json();
  };
  const createTwin = async (tenant: TestTenant, attributes: Record<string, unknown>) => {
    const response = await service.inject({ method: 'POST', url: '/my/twins/', headers: { ...tenant.headers(), 'content-type': JSON_API }, payload: document({ type: 'twins', attributes }) });
    if (response.statusCode !== 201) throw new Error(response.body);
    return response.json().data.id as string;
  };
  const postEvent = async (tenant: TestTenant, name: string) => {
    const response = await service.inject({
      method: 'POST',
      url: '/events/',
      headers: { ...tenant.headers({ twin: true }), 'content-type': JSON_API },
      payload: document({ type: 'events', attributes: { name, category: 'reach', data: { name } } }),
    });
    if (response.statusCode !== 201) throw new Error(response.body);
    return response.json().data.id as string;
  };
  /** Every item of a list, following links.next from `url`, and the pages' ids. */
  const walk = async (tenant: TestTenant, url: string, twin: string | boolean = false, between?: () => Promise<void>) => {
    const pages: string[][] = [];
    let next: string | null = url;
    while (next) {
      const body = ok(await get(tenant, next.replace(/^https?:\/\/[^/]+/, ''), twin));
      expect(body.meta).toBeUndefined();
      pages.push(body.data.map((item: { id: string }) => item.id));
      next = body.links.next;
      if (pages.length > 50) throw new Error('too many pages');
      await between?.();
    }
    return pages;
  };

  beforeAll(async () => {
    service = await TestApp.start();
    owner = await service.tenant({ organization: 'Reach' });
    other = await service.tenant({ organization: 'Reach other' });
    q = new QuestClient(service);
    for (const name of ['delta', 'alpha', 'charlie', 'bravo', 'echo']) twinIds.push(await createTwin(owner, { name, description: `${name} twin` }));
  });

  afterAll(() => service.close());

  describe('sparse fieldsets', () => {
    it('keep only the named members, in every form, attributes always present', async () => {
      const list = ok(await get(owner, '/my/twins/?fields[twins]=name,created'));
      for (const twin of list.data) {
        expect(Object.keys(twin).sort()).toEqual(['attributes', 'id', 'type']);
        expect(Object.keys(twin.attributes).sort()).toEqual(['created', 'name']);
      }
      const detail = ok(await get(owner, `/twins/${twinIds[0]}/?fields[twins]=tasks_supplied,organization`));
      expect(detail.data.attributes).toEqual({ tasks_supplied: 0 });
      expect(detail.data.relationships).toEqual({ organization: { data: { type: 'organizations', id: owner.organizationId } } });
      const none = ok(await get(owner, `/twins/${twinIds[0]}/?fields[twins]=`));
      expect(none.data).toEqual({ type: 'twins', id: twinIds[0], attributes: {} });
      const organization = ok(await get(owner, `/organizations/${owner.organizationId}/?fields[organizations]=name`));
      expect(organization.data.attributes).toEqual({ name: 'Reach' });
    });

    it('are 400s naming the parameter for an unknown type or member, and member names are those of the form', async () => {
      expectError(await get(owner, '/my/twins/?fields[twins]=name,nope'), 400, { parameter: 'fields[twins]' });
      expectError(await get(owner, '/my/twins/?fields[events]=name'), 400, { parameter: 'fields[events]' });
      // The detail spells `meta_data`; the lists `meta-data`.
      expectError(await get(owner, `/twins/${twinIds[0]}/?fields[twins]=meta-data`), 400, { parameter: 'fields[twins]' });
      expectError(await get(owner, '/twins/?fields[twins]=meta_data'), 400, { parameter: 'fields[twins]' });
      expect(ok(await get(owner, '/twins/?fields[twins]=meta-data,place-id')).data.every((t: { attributes: object }) => Object.keys(t.attributes).length === 2)).toBe(true);
    });
  });

  describe('include', () => {
    it('adds each related organization once, linked from the data (full linkage)', async () => {
      const body = ok(await get(owner, '/my/twins/?include=organization&fields[organizations]=name'));
      expect(body.included).toEqual([{ type: 'organizations', id: owner.organizationId, attributes: { name: 'Reach' } }]);
      const detail = ok(await get(owner, `/twins/${twinIds[0]}/?include=organization`));
      expect(detail.included).toHaveLength(1);
      expect(detail.included[0]).toMatchObject({ type: 'organizations', id: detail.data.relationships.organization.data.id });
      expect(ok(await get(owner, '/my/twins/')).included).toBeUndefined();
    });

    it('adds a quest\'s twin, readable original and images; a task\'s visible place', async () => {
      const maker = await service.tenant({ organization: 'Reach maker' });
      const makerTwin = await q.twin(maker, { name: 'Maker', public: true });
      const name = `Reach quest ${Date.now()}${Math.random()}`;
      const quest = await q.published(maker, { name }, makerTwin);
      const task = await q.send(maker, 'POST', `/quests/${quest.id}/tasks/`, { type: 'tasks', attributes: { name: 'Go' }, relationships: { place: { data: { type: 'twins', id: makerTwin } } } }, makerTwin);
      expect(task.statusCode).toBe(201);
      const feed = ok(await q.send(other, 'GET', `/quests/?name=${encodeURIComponent(name)}&include=twin,original&fields[twins]=name`));
      expect(feed.data.map((item: { id: string }) => item.id)).toEqual([quest.id]);
      expect(feed.included).toEqual([{ type: 'twins', id: makerTwin, attributes: { name: 'Maker' } }]);
      expect((await q.embark(other, quest.id)).statusCode).toBe(201);
      const mine = ok(await q.send(other, 'GET', `/my/quests/?include=original,twin&fields[quests]=name,original&fields[twins]=name&name=${encodeURIComponent(name)}`));
      const copy = mine.data[0];
      expect(copy.attributes).toEqual({ name });
      expect(copy.relationships.original.data).toEqual({ type: 'quests', id: quest.id });
      const types = mine.included.map((r: { type: string; id: string }) => `${r.type}/${r.id}`);
      expect(new Set(types).size).toBe(types.length);
      expect(types).toContain(`quests/${quest.id}`);
      expect(types).toContain(`twins/${other.twinId}`);
      const one = ok(await q.send(other, 'GET', `/my/quests/${copy.id}/?include=original&fields[quests]=name`));
      expect(one.included).toEqual([{ type: 'quests', id: quest.id, attributes: { name } }]);
      const tasks = ok(await q.send(other, 'GET', `/quests/${quest.id}/tasks/?include=place&fields[twins]=name&fields[tasks]=name,place`));
      expect(tasks.data[0]).toEqual({ type: 'tasks', id: task.json().data.id, attributes: { name: 'Go' }, relationships: { place: { data: { type: 'twins', id: makerTwin } } } });
      expect(tasks.included).toEqual([{ type: 'twins', id: makerTwin, attributes: { name: 'Maker' } }]);
    });

    it('is a 400 naming the parameter for an unknown relationship', async () => {
      expectError(await get(owner, '/my/twins/?include=owner'), 400, { parameter: 'include' });
      expectError(await get(owner, '/my/twins/?include=organization.twins'), 400, { parameter: 'include' });
      expectError(await q.send(owner, 'GET', '/quests/?include=place'), 400, { parameter: 'include' });
    });

    it('does not apply to the map listing', async () => {
      const response = await service.inject({ method: 'GET', url: '/twins/?include=organization', headers: { ...owner.headers(), accept: 'application/geo+json' } });
      expectError(response, 400, { parameter: 'include' });
    });
  });

  describe('sort', () => {
    it('orders twins by name either way, ties broken by id', async () => {
      const mine = new Set(['alpha', 'bravo', 'charlie', 'delta', 'echo']);
      const names = (body: { data: { attributes: { name: string } }[] }) => body.data.map((t) => t.attributes.name).filter((name) => mine.has(name));
      expect(names(ok(await get(owner, '/my/twins/?sort=name')))).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo']);
      expect(names(ok(await get(owner, '/my/twins/?sort=-name')))).toEqual(['echo', 'delta', 'charlie', 'bravo', 'alpha']);
    });

    it('orders the timeline oldest first with sort=timestamp', async () => {
      const ids = [await postEvent(owner, 'first'), await postEvent(owner, 'second')];
      const ascending = ok(await get(owner, '/events/?sort=timestamp&category=reach', true)).data.map((e: { id: string }) => e.id);
      expect(ascending.slice(-2)).toEqual(ids);
      const newest = ok(await get(owner, '/events/?category=reach&fields[events]=name', true));
      expect(newest.data[0]).toEqual({ type: 'events', id: ids[1], attributes: { name: 'second' } });
      expect(ok(await get(owner, `/events/${ids[0]}?fields[events]=data`, true)).data.attributes).toEqual({ data: { name: 'first' } });
    });

    it('is a 400 naming sort for an unknown or repeated key, or distance without a point', async () => {
      expectError(await get(owner, '/my/twins/?sort=size'), 400, { parameter: 'sort' });
      expectError(await get(owner, '/my/twins/?sort=name,-name'), 400, { parameter: 'sort' });
      expectError(await get(owner, '/twins/?sort=distance'), 400, { parameter: 'sort' });
      expectError(await get(owner, '/events/?sort=-name', true), 400, { parameter: 'sort' });
      expectError(await q.send(owner, 'GET', '/quests/?sort=twin'), 400, { parameter: 'sort' });
    });
  });

  describe('keyset pages', () => {
    it('walk a list forwards and back with no count, no repeats and nothing skipped', async () => {
      const all = ok(await get(owner, '/my/twins/?page_size=100')).data.map((t: { id: string }) => t.id);
      const pages = await walk(owner, '/my/twins/?page_size=2&page_after=');
      expect(pages.map((p) => p.length)).toEqual([2, 2, 2]);
      expect(pages.flat()).toEqual(all);

      const last = ok(await get(owner, '/my/twins/?page_size=2&page_before='));
      expect(last.data.map((t: { id: string }) => t.id)).toEqual(all.slice(4));
      expect(last.links.next).toBeNull();
      const back = ok(await get(owner, last.links.prev.replace(/^https?:\/\/[^/]+/, '')));
      expect(back.data.map((t: { id: string }) => t.id)).toEqual(all.slice(2, 4));
      const first = ok(await get(owner, '/my/twins/?page_size=2&page_after='));
      expect(first.links.prev).toBeNull();
      expect(first.links.first).toMatch(/page_after=$/);
      expect(first.links.last).toMatch(/page_before=$/);
    });

    it('stay exact while twins are inserted between pages, with any sort', async () => {
      const org = await service.tenant({ organization: 'Reach churn' });
      for (let i = 0; i < 6; i++) await createTwin(org, { name: `n${i}` });
      for (const order of ['', '&sort=-name', '&sort=modified']) {
        const before = ok(await get(org, `/my/twins/?page_size=100${order}`)).data.map((t: { id: string }) => t.id);
        let inserted = 0;
        const pages = await walk(org, `/my/twins/?page_size=2&page_after=${order}`, false, async () => {
          await createTwin(org, { name: `new${inserted++}` });
        });
        const seen = pages.flat();
        expect(new Set(seen).size).toBe(seen.length);
        for (const id of before) expect(seen).toContain(id);
      }
    });

    it('page the visible twins, the timeline and the quest feed the same way', async () => {
      // The visible twins (both halves of the visibility rule, read from their indexes): the first keyset
      // pages are the first numbered pages. Three pages of five need fifteen, whatever else is stored.
      for (let i = 0; i < 15; i++) await createTwin(owner, { name: `page ${i}` });
      const numbered = ok(await get(owner, '/twins/?page_size=15')).data.map((t: { id: string }) => t.id);
      const keyset: string[] = [];
      let url = '/twins/?page_size=5&page_after=';
      for (let i = 0; i < 3; i++) {
        const body = ok(await get(owner, url));
        keyset.push(...body.data.map((t: { id: string }) => t.id));
        url = body.links.next.replace(/^https?:\/\/[^/]+/, '');
      }
      expect(keyset).toEqual(numbered);
      const filtered = await walk(owner, `/twins/?page_size=2&page_after=&organization=${owner.organizationId}`);
      expect(filtered.flat()).toEqual(ok(await get(owner, `/twins/?page_size=100&organization=${owner.organizationId}`)).data.map((t: { id: string }) => t.id));

      for (let i = 0; i < 3; i++) await postEvent(owner, `page${i}`);
      const timeline = await walk(owner, '/events/?page_size=2&page_after=&category=reach', true);
      expect(timeline.flat()).toEqual(ok(await get(owner, '/events/?page_size=100&category=reach', true)).data.map((e: { id: string }) => e.id));

      const marker = `feed${Date.now()}${Math.random()}`;
      const maker = await service.tenant({ organization: 'Reach feed' });
      const makerTwin = await q.twin(maker, { public: true });
      for (const name of ['c', 'a', 'b']) await q.published(maker, { name: `${marker} ${name}`, price: name === 'a' ? 3 : 1 }, makerTwin);
      const feedIds = (body: { data: { id: string }[] }) => body.data.map((item) => item.id);
      for (const sort of ['name', '-price,name', 'created']) {
        const feed = await walk(other, `/quests/?page_size=1&page_after=&sort=${sort}&name=${marker}`, true);
        expect(feed.flat()).toEqual(feedIds(ok(await q.send(other, 'GET', `/quests/?page_size=100&sort=${sort}&name=${marker}`))));
      }
      const byName = ok(await q.send(other, 'GET', `/quests/?sort=name&name=${marker}&fields[quests]=name`)).data.map((item: { attributes: { name: string } }) => item.attributes.name);
      expect(byName).toEqual(['a', 'b', 'c'].map((n) => `${marker} ${n}`));
    });

    it('refuse a cursor that was altered, belongs to another sort or list, or comes with page_number', async () => {
      const first = ok(await get(owner, '/my/twins/?page_size=2&page_after='));
      const cursor = new URL(first.links.next).searchParams.get('page_after')!;
      expect((await get(owner, `/my/twins/?page_size=2&page_after=${encodeURIComponent(cursor)}`)).statusCode).toBe(200);
      expectError(await get(owner, `/my/twins/?page_size=2&sort=name&page_after=${encodeURIComponent(cursor)}`), 400, { parameter: 'page_after' });
      expectError(await get(owner, `/twins/?page_size=2&page_after=${encodeURIComponent(cursor)}`), 400, { parameter: 'page_after' });
      expectError(await get(owner, `/my/twins/?page_before=${encodeURIComponent(cursor)}&page_number=2`), 400, { parameter: 'page_number' });
      expectError(await get(owner, `/my/twins/?page_before=&page_after=`), 400, { parameter: 'page_before' });
      await fc.assert(
        fc.asyncProperty(fc.nat({ max: cursor.length - 1 }), fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.'), async (at, character) => {
          fc.pre(cursor[at] !== character);
          const altered = cursor.slice(0, at) + character + cursor.slice(at + 1);
          expectError(await get(owner, `/my/twins/?page_after=${encodeURIComponent(altered)}`), 400, { parameter: 'page_after' });
        }),
        { numRuns: 40 },
      );
    });
  });
});
