import { gif, png } from '../support/images';
import { CREATED_QUEST_ATTRIBUTES, FULL_QUEST_ATTRIBUTES, QuestClient, type QuestData } from '../support/quests';
import { expectError, JSON_API, MICROSECOND_TIMESTAMP, TestApp, TestTenant } from '../support/test-app';

const MISSING = '00000000-0000-4000-8000-000000000000';

describe('quests: creation, feeds, changes, tasks and embarking', () => {
  let service: TestApp;
  let q: QuestClient;

  beforeAll(async () => {
    service = await TestApp.start();
    q = new QuestClient(service);
  });
  afterAll(() => service.close());

  const ids = (response: { json(): { data: { id: string }[] } }) => response.json().data.map((item) => item.id);

  describe('POST /quests/', () => {
    let alpha: TestTenant;
    beforeAll(async () => {
      alpha = await service.tenant({ organization: 'Create org', twin: 'Creator' });
    });

    it('201 with exactly the shape of the creation answer', async () => {
      const response = await q.send(alpha, 'POST', '/quests/', {
        type: 'quests',
        attributes: { name: 'Coffee trail', summary: 'Five roasters', description: 'Follow the river' },
      });
      expect(response.statusCode).toBe(201);
      expect(response.headers['content-type']).toMatch(/^application\/vnd\.api\+json/);
      const body = response.json();
      expect(Object.keys(body)).toEqual(['data']);
      const data = body.data;
      expect(Object.keys(data).sort()).toEqual(['attributes', 'id', 'relationships', 'type']);
      expect(data.type).toBe('quests');
      expect(Object.keys(data.attributes).sort()).toEqual(CREATED_QUEST_ATTRIBUTES);
      expect(data.attributes).toEqual({
        created: expect.stringMatching(MICROSECOND_TIMESTAMP),
        modified: expect.stringMatching(MICROSECOND_TIMESTAMP),
        name: 'Coffee trail',
        description: 'Follow the river',
        summary: 'Five roasters',
        public: false,
      });
      expect(data.relationships).toEqual({ images: { data: [], meta: { count: 0 } }, 'summary-image': { data: null } });
    });

    it('name only: summary and description are empty strings', async () => {
      const quest = await q.create(alpha, { name: 'Bare' });
      expect(quest.attributes.summary).toBe('');
      expect(quest.attributes.description).toBe('');
    });

    it('with a summary image of the organization', async () => {
      const image = await q.image(alpha, 'image/png', png(4, 3));
      const quest = await q.create(alpha, { name: 'Pictured', 'summary-image': image.id });
      expect(quest.relationships['summary-image']).toEqual({ data: { type: 'images', id: image.id } });
      expect(quest.relationships.images).toEqual({ data: [{ type: 'images', id: image.id }], meta: { count: 1 } });
    });

    it('400 for a missing or over-long name, naming the attribute', async () => {
      expectError(await q.send(alpha, 'POST', '/quests/', { type: 'quests', attributes: { summary: 'x' } }), 400, { pointer: '/data/attributes/name' });
      expectError(await q.send(alpha, 'POST', '/quests/', { type: 'quests', attributes: { name: '' } }), 400, { pointer: '/data/attributes/name' });
      expectError(await q.send(alpha, 'POST', '/quests/', { type: 'quests', attributes: { name: 'x', price: null } }), 400, {
        pointer: '/data/attributes/price',
      });
      expectError(await q.send(alpha, 'POST', '/quests/', { type: 'quests', attributes: { name: 'x'.repeat(256) } }), 400, {
        pointer: '/data/attributes/name',
      });
    });

    it('400 for attributes outside the contract (public is false on creation)', async () => {
      expectError(await q.send(alpha, 'POST', '/quests/', { type: 'quests', attributes: { name: 'x', public: true } }), 400, {
        pointer: '/data/attributes/public',
      });
    });

    it('409 for the wrong type', async () => {
      expectError(await q.send(alpha, 'POST', '/quests/', { type: 'twins', attributes: { name: 'x' } }), 409, { pointer: '/data/type' });
    });

    it.each([[-1], ['-0.01'], ['1.234'], [0.001], ['abc'], [true], ['1e3'], [1e21], ['12345678901']])('400 for price %p', async (price) => {
      expectError(await q.send(alpha, 'POST', '/quests/', { type: 'quests', attributes: { name: 'x', price } }), 400, {
        pointer: '/data/attributes/price',
      });
    });

    it('400 for a summary image that is not an image of the organization', async () => {
      const other = await service.tenant({ organization: 'Image owner org' });
      const image = await q.image(other, 'image/png', png());
      for (const id of [image.id, MISSING]) {
        expectError(await q.send(alpha, 'POST', '/quests/', { type: 'quests', attributes: { name: 'x', 'summary-image': id } }), 400, {
          pointer: '/data/attributes/summary-image',
        });
      }
      expectError(await q.send(alpha, 'POST', '/quests/', { type: 'quests', attributes: { name: 'x', 'summary-image': 'nope' } }), 400, {
        pointer: '/data/attributes/summary-image',
      });
    });

    it('X-Twin is required, and must be a twin of the organization', async () => {
      const other = await service.tenant({ organization: 'Foreign twin org' });
      expectError(await q.send(alpha, 'POST', '/quests/', { type: 'quests', attributes: { name: 'x' } }, false), 400, { header: 'X-Twin' });
      expectError(await q.send(alpha, 'POST', '/quests/', { type: 'quests', attributes: { name: 'x' } }, other.twinId), 403, { header: 'X-Twin' });
      expectError(await q.send(alpha, 'GET', '/quests/', undefined, false), 400, { header: 'X-Twin' });
      expectError(await q.send(alpha, 'GET', '/my/quests/', undefined, other.twinId), 403, { header: 'X-Twin' });
    });
  });

  describe('GET /my/quests/<QUEST_ID>', () => {
    let alpha: TestTenant;
    let quest: QuestData;
    beforeAll(async () => {
      alpha = await service.tenant({ organization: 'Detail org', twin: 'Detail twin' });
      await service.dataSource.query(`UPDATE twins SET description = 'Walks a lot' WHERE id = $1`, [alpha.twinId]);
      quest = await q.create(alpha, { name: 'Detail', summary: 'S', description: 'D', price: '2.5' });
    });

    it.each([[''], ['/']])('full form, with or without a trailing slash (%p)', async (slash) => {
      const response = await q.send(alpha, 'GET', `/my/quests/${quest.id}${slash}`);
      expect(response.statusCode).toBe(200);
      const data = response.json().data;
      expect(Object.keys(data.attributes).sort()).toEqual(FULL_QUEST_ATTRIBUTES);
      expect(data.attributes).toEqual({
        created: quest.attributes.created,
        modified: quest.attributes.modified,
        name: 'Detail',
        summary: 'S',
        description: 'D',
        'summary-image-url': null,
        public: false,
        price: 2.5,
        'twin-metadata': { id: alpha.twinId, name: 'Detail twin', description: 'Walks a lot' },
        'original-twin-metadata': null,
        'task-count': 0,
      });
      expect(data.relationships).toEqual({
        images: { data: [], meta: { count: 0 } },
        'summary-image': { data: null },
        twin: { data: { type: 'twins', id: alpha.twinId } },
        original: { data: null },
      });
    });

    it('404 for another twin\'s quest, another organization\'s quest, an unknown id and a non-UUID', async () => {
      const sibling = await q.twin(alpha, { public: true });
      expectError(await q.send(alpha, 'GET', `/my/quests/${quest.id}`, undefined, sibling), 404);
      const other = await service.tenant({ organization: 'Detail other org' });
      expectError(await q.send(other, 'GET', `/my/quests/${quest.id}`), 404);
      expectError(await q.send(alpha, 'GET', `/my/quests/${MISSING}`), 404);
      expectError(await q.send(alpha, 'GET', `/my/quests/not-a-uuid`), 404);
    });

    it('summary-image-url is the absolute content URL of the image', async () => {
      const image = await q.image(alpha, 'image/png', png(2, 2));
      const response = await q.patch(alpha, quest.id, { 'summary-image': image.id });
      expect(response.statusCode).toBe(200);
      const url = response.json().data.attributes['summary-image-url'];
      expect(url).toMatch(new RegExp(`^http://localhost(:80)?/images/${image.id}/content$`));
      const content = await service.inject({ method: 'GET', url: new URL(url).pathname, headers: alpha.headers() });
      expect(content.statusCode).toBe(200);
      expect(content.headers['content-type']).toBe('image/png');
    });
  });

  describe('GET /quests/ (discovery feed)', () => {
    let alpha: TestTenant;
    let beta: TestTenant;
    let betaQuest: QuestData;
    let alphaPublic: QuestData;
    let alphaPrivate: QuestData;
    let alphaOther: QuestData;
    let alphaSibling: string;

    beforeAll(async () => {
      alpha = await service.tenant({ organization: 'Feed alpha', twin: 'Feed alpha twin' });
      beta = await service.tenant({ organization: 'Feed beta', twin: 'Feed beta twin' });
      alphaSibling = await q.twin(alpha, { name: 'Sibling' });
      alphaPublic = await q.published(alpha, { name: 'Riverside WALK', description: 'Along the Seine banks' });
      alphaPrivate = await q.create(alpha, { name: 'Riverside draft', description: 'Seine, unpublished' });
      alphaOther = await q.published(alpha, { name: 'Museum morning', description: 'Paintings' }, alphaSibling);
      // Beta's twin is private: its public quest is invisible to alpha until the twin is public.
      betaQuest = await q.published(beta, { name: 'Beta riverside', description: 'Elsewhere' });
    });

    it('lists the public quests of visible twins, in the full form, newest first', async () => {
      const response = await q.send(alpha, 'GET', '/quests/?name=riverside');
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(ids(response)).toEqual([alphaPublic.id]);
      const data = body.data[0];
      expect(Object.keys(data.attributes).sort()).toEqual(FULL_QUEST_ATTRIBUTES);
      expect(Object.keys(data.relationships).sort()).toEqual(['images', 'original', 'summary-image', 'twin']);
      expect(data.attributes.public).toBe(true);
      expect(data.attributes['twin-metadata']).toEqual({ id: alpha.twinId, name: 'Feed alpha twin', description: '' });
      expect(body.meta).toEqual({ pagination: { page: 1, pages: 1, count: 1 } });
      expect(body.links.first).toMatch(/^http:\/\/.+\/quests\/\?name=riverside&page_number=1$/);

      const all = await q.send(alpha, 'GET', '/quests/');
      const listed = ids(all);
      expect(listed).toEqual(expect.arrayContaining([alphaPublic.id, alphaOther.id]));
      expect(listed).not.toContain(alphaPrivate.id);
      expect(listed).not.toContain(betaQuest.id);
      expect(listed.indexOf(alphaOther.id)).toBeLessThan(listed.indexOf(alphaPublic.id));
    });

    it('another organization\'s public quest appears once its creating twin is visible (public or supplier)', async () => {
      await q.setTwinPublic(beta.twinId, true);
      try {
        expect(ids(await q.send(alpha, 'GET', '/quests/?name=riverside'))).toEqual(expect.arrayContaining([alphaPublic.id, betaQuest.id]));
        expect(ids(await q.send(beta, 'GET', `/quests/?owned_by=${alpha.twinId}`))).toEqual([]);
      } finally {
        await q.setTwinPublic(beta.twinId, false);
      }
      expect(ids(await q.send(alpha, 'GET', '/quests/?name=riverside'))).toEqual([alphaPublic.id]);
    });

    it('a twin that becomes a supplier through PATCH brings its public quests into every feed, and takes them out again', async () => {
      const patchServices = async (services: string[]) => {
        const response = await q.send(beta, 'PATCH', `/my/twins/${beta.twinId}/`, { type: 'twins', id: beta.twinId, attributes: { personality: { services } } });
        expect(response.statusCode).toBe(200);
      };
      const alphaFeed = async () => {
        const body = (await q.send(alpha, 'GET', '/quests/?name=riverside')).json();
        return { ids: body.data.map((quest: QuestData) => quest.id).sort(), count: body.meta.pagination.count };
      };
      await patchServices(['river cruises']);
      try {
        expect(await alphaFeed()).toEqual({ ids: [alphaPublic.id, betaQuest.id].sort(), count: 2 });
        expect((await q.send(alpha, 'GET', `/quests/${betaQuest.id}/tasks/`)).statusCode).toBe(200);
      } finally {
        await patchServices([]);
      }
      expect(await alphaFeed()).toEqual({ ids: [alphaPublic.id], count: 1 });
      expectError(await q.send(alpha, 'GET', `/quests/${betaQuest.id}/tasks/`), 404);
    });

    it('filters owned_by, name and description (contains, case-insensitive)', async () => {
      expect(ids(await q.send(alpha, 'GET', `/quests/?owned_by=${alphaSibling}`))).toEqual([alphaOther.id]);
      expect(ids(await q.send(alpha, 'GET', `/quests/?owned_by=${alpha.twinId}`))).toEqual([alphaPublic.id]);
      expect(ids(await q.send(alpha, 'GET', '/quests/?name=RIVERSIDE%20w'))).toEqual([alphaPublic.id]);
      expect(ids(await q.send(alpha, 'GET', '/quests/?description=seine'))).toEqual([alphaPublic.id]);
      expect(ids(await q.send(alpha, 'GET', '/quests/?description=paint&name=museum'))).toEqual([alphaOther.id]);
      expect(ids(await q.send(alpha, 'GET', '/quests/?name=%25'))).toEqual([]);
    });

    it('pages with the shared envelope; a page past the end is a 404', async () => {
      const first = await q.send(alpha, 'GET', `/quests/?owned_by=${alpha.twinId}&page_size=1`);
      expect(first.json().meta.pagination).toEqual({ page: 1, pages: 1, count: 1 });
      const both = await q.send(beta, 'GET', `/quests/?owned_by=${beta.twinId}&page_size=1&page_number=1`);
      expect(both.json().links.next).toBeNull();
      expectError(await q.send(alpha, 'GET', `/quests/?owned_by=${alpha.twinId}&page_number=2`), 404);

      // Several pages: one quest each, in the feed's order, with next/prev links.
      const feed = ids(await q.send(alpha, 'GET', '/quests/?page_size=100'));
      expect(feed.length).toBeGreaterThanOrEqual(2);
      const paged: string[] = [];
      for (let page = 1; page <= feed.length; page++) {
        const body = (await q.send(alpha, 'GET', `/quests/?page_size=1&page_number=${page}`)).json();
        expect(body.meta.pagination).toEqual({ page, pages: feed.length, count: feed.length });
        expect(body.links.prev === null).toBe(page === 1);
        expect(body.links.next === null).toBe(page === feed.length);
        paged.push(...body.data.map((quest: { id: string }) => quest.id));
      }
      expect(paged).toEqual(feed);
    });

    it('400 naming the parameter for unknown or malformed filters', async () => {
      expectError(await q.send(alpha, 'GET', '/quests/?owned_by=nope'), 400, { parameter: 'owned_by' });
      expectError(await q.send(alpha, 'GET', '/quests/?is_original=true'), 400, { parameter: 'is_original' });
      expectError(await q.send(alpha, 'GET', '/quests/?name='), 400, { parameter: 'name' });
      expectError(await q.send(alpha, 'GET', '/quests/?page_size=101'), 400, { parameter: 'page_size' });
    });
  });

  describe('GET /my/quests/', () => {
    let creator: TestTenant;
    let alpha: TestTenant;
    let original: QuestData;
    let other: QuestData;
    let own: QuestData;
    let copyId: string;
    let copy2Id: string;

    beforeAll(async () => {
      creator = await service.tenant({ organization: 'Mine creator org', twin: 'Mine creator' });
      await q.setTwinPublic(creator.twinId, true);
      alpha = await service.tenant({ organization: 'Mine alpha org', twin: 'Mine alpha' });
      original = await q.published(creator, { name: 'Castle climb', description: 'Stairs' });
      other = await q.published(creator, { name: 'Bakery hop', description: 'Croissants' });
      own = await q.create(alpha, { name: 'My own castle', description: 'Drafting' });
      copyId = (await q.embark(alpha, original.id)).json().data.id;
      copy2Id = (await q.embark(alpha, other.id)).json().data.id;
    });

    it('lists what the twin created and embarked on, newest first', async () => {
      const response = await q.send(alpha, 'GET', '/my/quests/');
      expect(response.statusCode).toBe(200);
      expect(ids(response)).toEqual([copy2Id, copyId, own.id]);
      expect(response.json().meta.pagination).toEqual({ page: 1, pages: 1, count: 3 });
      const copy = response.json().data[1];
      expect(Object.keys(copy.attributes).sort()).toEqual(FULL_QUEST_ATTRIBUTES);
      expect(copy.relationships.original).toEqual({ data: { type: 'quests', id: original.id } });
      expect(copy.attributes['original-twin-metadata']).toEqual({ id: creator.twinId, name: 'Mine creator', description: '' });
      expect(copy.attributes['twin-metadata']).toEqual({ id: alpha.twinId, name: 'Mine alpha', description: '' });
    });

    it('filters is_original, original, owned_by, name and description', async () => {
      expect(ids(await q.send(alpha, 'GET', '/my/quests/?is_original=true'))).toEqual([own.id]);
      expect(ids(await q.send(alpha, 'GET', '/my/quests/?is_original=false'))).toEqual([copy2Id, copyId]);
      expect(ids(await q.send(alpha, 'GET', `/my/quests/?original=${original.id}`))).toEqual([copyId]);
      expect(ids(await q.send(alpha, 'GET', `/my/quests/?owned_by=${alpha.twinId}`))).toEqual([copy2Id, copyId, own.id]);
      expect(ids(await q.send(alpha, 'GET', `/my/quests/?owned_by=${creator.twinId}`))).toEqual([]);
      expect(ids(await q.send(alpha, 'GET', '/my/quests/?name=CASTLE'))).toEqual([copyId, own.id]);
      expect(ids(await q.send(alpha, 'GET', '/my/quests/?name=castle&is_original=false'))).toEqual([copyId]);
      expect(ids(await q.send(alpha, 'GET', '/my/quests/?description=croiss'))).toEqual([copy2Id]);
      expectError(await q.send(alpha, 'GET', '/my/quests/?is_original=maybe'), 400, { parameter: 'is_original' });
      expectError(await q.send(alpha, 'GET', '/my/quests/?original=1'), 400, { parameter: 'original' });
      expectError(await q.send(alpha, 'GET', '/my/quests/?ordering=name'), 400, { parameter: 'ordering' });
    });

    it('another twin of the same organization has its own list', async () => {
      const sibling = await q.twin(alpha);
      const response = await q.send(alpha, 'GET', '/my/quests/', undefined, sibling);
      expect(response.json().data).toEqual([]);
      expect(response.json().meta.pagination).toEqual({ page: 1, pages: 1, count: 0 });
    });
  });

  describe('PATCH /quests/<QUEST_ID>/', () => {
    let alpha: TestTenant;
    beforeAll(async () => {
      alpha = await service.tenant({ organization: 'Patch org', twin: 'Patcher' });
    });

    it('the creating twin changes public, name, summary, description, price and summary-image; 200 in the full form', async () => {
      const quest = await q.create(alpha, { name: 'Before' });
      const image = await q.image(alpha, 'image/gif', gif(3, 3));
      const response = await q.patch(alpha, quest.id, {
        public: true,
        name: 'After',
        summary: 'Sum',
        description: 'Desc',
        price: '12.5',
        'summary-image': image.id,
      });
      expect(response.statusCode).toBe(200);
      const data = response.json().data;
      expect(Object.keys(data.attributes).sort()).toEqual(FULL_QUEST_ATTRIBUTES);
      expect(data.attributes).toEqual(
        expect.objectContaining({ public: true, name: 'After', summary: 'Sum', description: 'Desc', price: 12.5, created: quest.attributes.created }),
      );
      expect(data.attributes.modified > (quest.attributes.modified as string)).toBe(true);
      expect(data.attributes['summary-image-url']).toMatch(new RegExp(`/images/${image.id}/content$`));
      expect(data.relationships['summary-image']).toEqual({ data: { type: 'images', id: image.id } });

      const cleared = await q.patch(alpha, quest.id, { 'summary-image': null, price: 0.1 });
      expect(cleared.json().data.attributes['summary-image-url']).toBeNull();
      expect(cleared.json().data.relationships['summary-image']).toEqual({ data: null });
      expect(cleared.json().data.attributes.price).toBe(0.1);
    });

    it('409 when data.id differs from the path; 404 for unknown quests', async () => {
      const quest = await q.create(alpha, { name: 'Ids' });
      expectError(await q.send(alpha, 'PATCH', `/quests/${quest.id}/`, { type: 'quests', id: MISSING, attributes: { name: 'x' } }), 409, {
        pointer: '/data/id',
      });
      expectError(await q.send(alpha, 'PATCH', `/quests/${quest.id}/`, { type: 'quests', attributes: { name: 'x' } }), 400, { pointer: '/data/id' });
      expectError(await q.patch(alpha, MISSING, { name: 'x' }), 404);
    });

    it('400 for invalid values', async () => {
      const quest = await q.create(alpha, { name: 'Invalid' });
      expectError(await q.patch(alpha, quest.id, { price: '-1' }), 400, { pointer: '/data/attributes/price' });
      expectError(await q.patch(alpha, quest.id, { public: 'yes' }), 400, { pointer: '/data/attributes/public' });
      expectError(await q.patch(alpha, quest.id, { name: null }), 400, { pointer: '/data/attributes/name' });
      for (const attribute of ['summary', 'description', 'public', 'price']) {
        expectError(await q.patch(alpha, quest.id, { [attribute]: null }), 400, { pointer: `/data/attributes/${attribute}` });
      }
      expectError(await q.patch(alpha, quest.id, { 'summary-image': MISSING }), 400, { pointer: '/data/attributes/summary-image' });
      expectError(await q.patch(alpha, quest.id, { owner: 'me' }), 400, { pointer: '/data/attributes/owner' });
    });

    it('only the creating twin: 403 for a twin that can read the quest, 404 for one that cannot', async () => {
      const sibling = await q.twin(alpha);
      const draft = await q.create(alpha, { name: 'Draft' });
      expectError(await q.patch(alpha, draft.id, { name: 'Mine now' }, sibling), 404);
      const published = await q.published(alpha, { name: 'Published' });
      expectError(await q.patch(alpha, published.id, { name: 'Mine now' }, sibling), 403);
      const other = await service.tenant({ organization: 'Patch other org' });
      expectError(await q.patch(other, published.id, { name: 'Mine now' }), 404);
      await q.setTwinPublic(alpha.twinId, true);
      expectError(await q.patch(other, published.id, { name: 'Mine now' }), 403);
      await q.setTwinPublic(alpha.twinId, false);
      const unchanged = await q.send(alpha, 'GET', `/my/quests/${published.id}`);
      expect(unchanged.json().data.attributes.name).toBe('Published');
    });

    it('a started quest refuses changes of name, price and summary-image (409) but takes the rest', async () => {
      const image = await q.image(alpha, 'image/png', png());
      const another = await q.image(alpha, 'image/png', png(2, 1));
      const quest = await q.published(alpha, { name: 'Started', price: '1.10', 'summary-image': image.id });
      const embarker = await q.twin(alpha);
      expect((await q.embark(alpha, quest.id, embarker)).statusCode).toBe(201);

      const name = expectError(await q.patch(alpha, quest.id, { name: 'Renamed' }), 409, { pointer: '/data/attributes/name' });
      expect(name.code).toBe('quest_started');
      expectError(await q.patch(alpha, quest.id, { price: 2 }), 409, { pointer: '/data/attributes/price' });
      expectError(await q.patch(alpha, quest.id, { 'summary-image': another.id }), 409, { pointer: '/data/attributes/summary-image' });
      expectError(await q.patch(alpha, quest.id, { 'summary-image': null }), 409, { pointer: '/data/attributes/summary-image' });
      expectError(await q.addTask(alpha, quest.id, { name: 'Late task' }), 409);

      // Sending the current values is no change; other attributes still change.
      const ok = await q.patch(alpha, quest.id, { name: 'Started', price: '1.1', 'summary-image': image.id, description: 'New words', summary: 'New' });
      expect(ok.statusCode).toBe(200);
      expect(ok.json().data.attributes).toEqual(expect.objectContaining({ description: 'New words', summary: 'New', name: 'Started', price: 1.1 }));
      const unpublished = await q.patch(alpha, quest.id, { public: false });
      expect(unpublished.json().data.attributes.public).toBe(false);
      const current = await q.send(alpha, 'GET', `/my/quests/${quest.id}`);
      expect(current.json().data.relationships['summary-image'].data.id).toBe(image.id);
    });
  });

  describe('tasks', () => {
    let alpha: TestTenant;
    let beta: TestTenant;
    let place: string;
    beforeAll(async () => {
      alpha = await service.tenant({ organization: 'Tasks org', twin: 'Task maker' });
      beta = await service.tenant({ organization: 'Tasks other org', twin: 'Private beta' });
      place = await q.twin(alpha, { name: 'Café', supplier: true });
    });

    it('POST 201 with name, description, position and the place; counts into task-count and tasks_supplied', async () => {
      const quest = await q.create(alpha, { name: 'With tasks' });
      const before = await q.tasksSupplied(place);
      const response = await q.addTask(alpha, quest.id, { name: 'Espresso', description: 'Single origin' }, place);
      expect(response.statusCode).toBe(201);
      const task = response.json().data;
      expect(task.type).toBe('tasks');
      expect(Object.keys(task.attributes).sort()).toEqual(['created', 'description', 'modified', 'name', 'position']);
      expect(task.attributes).toEqual(expect.objectContaining({ name: 'Espresso', description: 'Single origin', position: 0 }));
      expect(task.relationships).toEqual({ quest: { data: { type: 'quests', id: quest.id } }, place: { data: { type: 'twins', id: place } } });
      expect(await q.tasksSupplied(place)).toBe(before + 1);

      const second = (await q.addTask(alpha, quest.id, { name: 'Cake' })).json().data;
      expect(second.attributes.position).toBe(1);
      expect(second.relationships.place).toEqual({ data: null });
      const first = (await q.addTask(alpha, quest.id, { name: 'Water', position: 0 }, place)).json().data;
      expect(await q.tasksSupplied(place)).toBe(before + 2);

      const detail = await q.send(alpha, 'GET', `/my/quests/${quest.id}`);
      expect(detail.json().data.attributes['task-count']).toBe(3);

      const list = await q.send(alpha, 'GET', `/quests/${quest.id}/tasks/`);
      expect(list.statusCode).toBe(200);
      expect(list.json().data.map((t: { attributes: { name: string } }) => t.attributes.name)).toEqual(['Espresso', 'Water', 'Cake']);
      expect(list.json().data.map((t: { id: string }) => t.id)).toContain(first.id);
      expect(list.json().meta.pagination).toEqual({ page: 1, pages: 1, count: 3 });
      const paged = await q.send(alpha, 'GET', `/quests/${quest.id}/tasks?page_size=2&page_number=2`);
      expect(paged.json().data).toHaveLength(1);
    });

    it('400 for an invalid task or a place the caller cannot see', async () => {
      const quest = await q.create(alpha, { name: 'Task errors' });
      expectError(await q.addTask(alpha, quest.id, {}), 400, { pointer: '/data/attributes/name' });
      expectError(await q.addTask(alpha, quest.id, { name: 'x', position: -1 }), 400, { pointer: '/data/attributes/position' });
      expectError(await q.addTask(alpha, quest.id, { name: 'x', position: 1.5 }), 400, { pointer: '/data/attributes/position' });
      expectError(await q.addTask(alpha, quest.id, { name: 'x', description: null }), 400, { pointer: '/data/attributes/description' });
      expectError(await q.addTask(alpha, quest.id, { name: 'x' }, beta.twinId), 400, { pointer: '/data/relationships/place/data/id' });
      expectError(await q.addTask(alpha, quest.id, { name: 'x' }, MISSING), 400, { pointer: '/data/relationships/place/data/id' });
      expectError(
        await q.send(alpha, 'POST', `/quests/${quest.id}/tasks/`, { type: 'tasks', attributes: { name: 'x' }, relationships: { place: { data: { type: 'quests', id: place } } } }),
        409,
      );
      expectError(await q.send(alpha, 'POST', `/quests/${quest.id}/tasks/`, { type: 'quests', attributes: { name: 'x' } }), 409);
      // A public twin of another organization is a valid place.
      await q.setTwinPublic(beta.twinId, true);
      expect((await q.addTask(alpha, quest.id, { name: 'x' }, beta.twinId)).statusCode).toBe(201);
      await q.setTwinPublic(beta.twinId, false);
      expect(await q.tasksSupplied(beta.twinId)).toBe(1);
    });

    it('only the creating twin adds tasks; reading needs the quest to be readable', async () => {
      const quest = await q.create(alpha, { name: 'Private tasks' });
      await q.addTask(alpha, quest.id, { name: 'Secret' });
      const sibling = await q.twin(alpha);
      expectError(await q.addTask(alpha, quest.id, { name: 'x' }, undefined, sibling), 404);
      expectError(await q.send(alpha, 'GET', `/quests/${quest.id}/tasks/`, undefined, sibling), 404);
      expectError(await q.send(beta, 'GET', `/quests/${quest.id}/tasks/`), 404);
      await q.patch(alpha, quest.id, { public: true });
      expectError(await q.addTask(alpha, quest.id, { name: 'x' }, undefined, sibling), 403);
      const visible = await q.send(alpha, 'GET', `/quests/${quest.id}/tasks/`, undefined, sibling);
      expect(visible.json().data.map((t: { attributes: { name: string } }) => t.attributes.name)).toEqual(['Secret']);
      expectError(await q.send(alpha, 'GET', `/quests/${MISSING}/tasks/`), 404);
      expectError(await q.send(alpha, 'GET', `/quests/${quest.id}/tasks/?place=x`), 400, { parameter: 'place' });
    });
  });

  describe('POST /quests/<QUEST_ID>/embark/', () => {
    let creator: TestTenant;
    let beta: TestTenant;
    let place: string;
    beforeAll(async () => {
      creator = await service.tenant({ organization: 'Embark creator org', twin: 'Guide' });
      beta = await service.tenant({ organization: 'Embark beta org', twin: 'Walker' });
      place = await q.twin(creator, { name: 'Museum', supplier: true });
    });

    const copies = async (questId: string) =>
      (await service.dataSource.query(`SELECT id, twin_id FROM quests WHERE original_id = $1`, [questId])) as { id: string; twin_id: string }[];
    const revenueRows = async (questId: string) =>
      (await service.dataSource.query(`SELECT amount::text AS amount, twin_id, embarking_twin_id FROM revenue_entries WHERE quest_id = $1`, [questId])) as {
        amount: string;
        twin_id: string;
        embarking_twin_id: string;
      }[];

    it('201: a copy owned by the embarking twin, its tasks, and a revenue entry for the creator', async () => {
      await q.setTwinPublic(creator.twinId, true);
      const image = await q.image(creator, 'image/png', png(5, 5));
      const quest = await q.published(creator, { name: 'Museum tour', summary: 'Art', description: 'Three rooms', price: '7.25', 'summary-image': image.id });
      await q.addTask(creator, quest.id, { name: 'Room 1' }, place);
      await q.addTask(creator, quest.id, { name: 'Room 2' });
      const supplied = await q.tasksSupplied(place);

      const response = await q.embark(beta, quest.id);
      expect(response.statusCode).toBe(201);
      const copy = response.json().data;
      expect(copy.id).not.toBe(quest.id);
      expect(Object.keys(copy.attributes).sort()).toEqual(FULL_QUEST_ATTRIBUTES);
      expect(copy.attributes).toEqual(
        expect.objectContaining({
          name: 'Museum tour',
          summary: 'Art',
          description: 'Three rooms',
          public: false,
          price: 7.25,
          'task-count': 2,
          'twin-metadata': { id: beta.twinId, name: 'Walker', description: '' },
          'original-twin-metadata': { id: creator.twinId, name: 'Guide', description: '' },
        }),
      );
      expect(copy.relationships.original).toEqual({ data: { type: 'quests', id: quest.id } });
      expect(copy.relationships.twin).toEqual({ data: { type: 'twins', id: beta.twinId } });
      expect(copy.relationships['summary-image']).toEqual({ data: { type: 'images', id: image.id } });
      expect(await q.tasksSupplied(place)).toBe(supplied + 1);

      // The embarking organization reads the copy's image, the copy and its tasks.
      const content = await service.inject({ method: 'GET', url: `/images/${image.id}/content`, headers: beta.headers() });
      expect(content.statusCode).toBe(200);
      const tasks = await q.send(beta, 'GET', `/quests/${copy.id}/tasks/`);
      expect(tasks.json().data.map((t: { attributes: { name: string } }) => t.attributes.name)).toEqual(['Room 1', 'Room 2']);
      expect(await copies(quest.id)).toEqual([{ id: copy.id, twin_id: beta.twinId }]);
      expect(await revenueRows(quest.id)).toEqual([{ amount: '7.25', twin_id: creator.twinId, embarking_twin_id: beta.twinId }]);
      await q.setTwinPublic(creator.twinId, false);
    });

    it('a second embark by the same twin is a 409', async () => {
      const quest = await q.published(creator, { name: 'Twice', price: 1 });
      const walker = await q.twin(creator);
      expect((await q.embark(creator, quest.id, walker)).statusCode).toBe(201);
      const error = expectError(await q.embark(creator, quest.id, walker), 409);
      expect(error.code).toBe('already_embarked');
      expect(await copies(quest.id)).toHaveLength(1);
      expect(await revenueRows(quest.id)).toHaveLength(1);
    });

    it('two concurrent embarks by the same twin: one 201, one 409, one copy, one revenue entry', async () => {
      const quest = await q.published(creator, { name: 'Race', price: '0.50' });
      const walker = await q.twin(creator);
      const responses = await Promise.all([q.embark(creator, quest.id, walker), q.embark(creator, quest.id, walker)]);
      expect(responses.map((r) => r.statusCode).sort()).toEqual([201, 409]);
      expect(expectError(responses.find((r) => r.statusCode === 409)!, 409).code).toBe('already_embarked');
      expect(await copies(quest.id)).toEqual([{ id: expect.any(String), twin_id: walker }]);
      expect(await revenueRows(quest.id)).toEqual([{ amount: '0.50', twin_id: creator.twinId, embarking_twin_id: walker }]);
    });

    it('concurrent embarks by different twins each get their copy, tasks and revenue entry', async () => {
      const quest = await q.published(creator, { name: 'Crowd', price: '0.10' });
      const second = await q.twin(creator, { name: 'Fountain', supplier: true });
      await q.addTask(creator, quest.id, { name: 'Museum' }, place);
      await q.addTask(creator, quest.id, { name: 'Fountain' }, second);
      const [placeBefore, secondBefore] = [await q.tasksSupplied(place), await q.tasksSupplied(second)];
      const walkers = await Promise.all([1, 2, 3, 4, 5].map((i) => q.twin(creator, { name: `Crowd ${i}` })));
      const responses = await Promise.all(walkers.map((walker) => q.embark(creator, quest.id, walker)));
      expect(responses.map((r) => r.statusCode)).toEqual([201, 201, 201, 201, 201]);
      expect(await copies(quest.id)).toHaveLength(5);
      expect(await q.tasksSupplied(place)).toBe(placeBefore + 5);
      expect(await q.tasksSupplied(second)).toBe(secondBefore + 5);
      const sum = await service.dataSource.query(`SELECT sum(amount)::text AS total FROM revenue_entries WHERE quest_id = $1`, [quest.id]);
      expect(sum[0].total).toBe('0.50');
    });

    it('409 on one\'s own quest or copy, and on another twin\'s copy', async () => {
      const quest = await q.published(creator, { name: 'Own' });
      expect(expectError(await q.embark(creator, quest.id), 409).code).toBe('own_quest');
      const walker = await q.twin(creator);
      const copy = (await q.embark(creator, quest.id, walker)).json().data;
      expect(expectError(await q.embark(creator, copy.id, walker), 409).code).toBe('own_quest');
      await q.patch(creator, copy.id, { public: true }, walker);
      const third = await q.twin(creator);
      expect(expectError(await q.embark(creator, copy.id, third), 409).code).toBe('not_an_original');
    });

    it('404 for a quest that is not public, or whose creating twin the caller cannot see', async () => {
      const draft = await q.create(creator, { name: 'Draft' });
      const walker = await q.twin(creator);
      expectError(await q.embark(creator, draft.id, walker), 404);
      const published = await q.published(creator, { name: 'Hidden twin' });
      expectError(await q.embark(beta, published.id), 404);
      expectError(await q.embark(beta, MISSING), 404);
      expect(await copies(published.id)).toHaveLength(0);
      expect(await revenueRows(published.id)).toHaveLength(0);
    });
  });

  describe('OpenAPI', () => {
    it('describes every quest, task, image and revenue route, with the tenant headers and examples', async () => {
      const spec = (await service.inject({ method: 'GET', url: '/docs-json' })).json();
      const twinRoutes: [string, string][] = [
        ['/quests', 'get'],
        ['/quests', 'post'],
        ['/quests/{questId}', 'patch'],
        ['/quests/{questId}/embark', 'post'],
        ['/quests/{questId}/tasks', 'get'],
        ['/quests/{questId}/tasks', 'post'],
        ['/my/quests', 'get'],
        ['/my/quests/{questId}', 'get'],
        ['/my/quests/total_revenue', 'get'],
      ];
      const imageRoutes: [string, string][] = [
        ['/images', 'post'],
        ['/images/{imageId}', 'get'],
        ['/images/{imageId}/content', 'get'],
      ];
      for (const [path, method] of [...twinRoutes, ...imageRoutes]) {
        const operation = spec.paths[path]?.[method];
        expect({ path, method, described: !!operation?.description }).toEqual({ path, method, described: true });
        const success = operation.responses['200'] ?? operation.responses['201'];
        if (!path.endsWith('/content')) expect(JSON.stringify(success)).toContain('example');
        expect(operation.responses['401']).toBeDefined();
      }
      for (const [path, method] of twinRoutes) expect(spec.paths[path][method].security).toEqual([{ Token: [], Organization: [], Twin: [] }]);
      for (const [path, method] of imageRoutes) expect(spec.paths[path][method].security).toEqual([{ Token: [], Organization: [] }]);
      for (const [path, method] of [['/quests', 'post'], ['/quests/{questId}', 'patch'], ['/quests/{questId}/tasks', 'post']]) {
        expect(JSON.stringify(spec.paths[path][method].requestBody)).toContain('example');
      }
    });
  });

  describe('wire', () => {
    it('405 for a method the path does not have; JSON:API media types only', async () => {
      const alpha = await service.tenant({ organization: 'Wire org' });
      const response = await service.inject({ method: 'DELETE', url: '/quests/', headers: alpha.headers({ twin: true }) });
      expectError(response, 405);
      const bad = await service.inject({
        method: 'POST',
        url: '/quests/',
        headers: { ...alpha.headers({ twin: true }), 'content-type': 'text/plain' },
        payload: 'name=x',
      });
      expectError(bad, 415);
      const json = await service.inject({
        method: 'POST',
        url: '/quests',
        headers: { ...alpha.headers({ twin: true }), 'content-type': 'application/json' },
        payload: JSON.stringify({ data: { type: 'quests', attributes: { name: 'Plain JSON' } } }),
      });
      expect(json.statusCode).toBe(201);
      expect(json.headers['content-type']).toMatch(new RegExp(`^${JSON_API.replace(/[+.]/g, '\\$&')}`));
    });
  });
});
