import { ADMIN_TOKEN, document, expectError, JSON_API, TestApp, TestTenant } from '../support/test-app';

// Great-circle distances: Paris–London ≈ 344 km, Paris–Berlin ≈ 878 km, London–Berlin ≈ 932 km.
const PARIS = [2.3522, 48.8566];
const LONDON = [-0.1276, 51.5072];
const BERLIN = [13.405, 52.52];
const point = (coordinates: number[]) => ({ type: 'Point', coordinates });

describe('twins: filters, spatial queries and the geo listing', () => {
  let service: TestApp;
  let owner: TestTenant;
  let stranger: TestTenant;
  let colleague: { token: string };
  const twin: Record<string, string> = {};
  let hiddenStranger: string;

  const headersOf = (tenant: TestTenant, token = tenant.token) => ({ ...tenant.headers(), authorization: `Token ${token}` });

  const create = async (tenant: TestTenant, attributes: Record<string, unknown>, token = tenant.token) => {
    const response = await service.inject({
      method: 'POST',
      url: '/my/twins/',
      headers: { ...headersOf(tenant, token), 'content-type': JSON_API },
      payload: document({ type: 'twins', attributes }),
    });
    if (response.statusCode !== 201) throw new Error(`create failed: ${response.body}`);
    return response.json().data.id as string;
  };

  const list = (query: string, headers: Record<string, string> = {}, tenant = owner) =>
    service.inject({ method: 'GET', url: `/twins/?${query}`, headers: { ...tenant.headers(), ...headers } });

  /** Ids of the owner's organization's twins matching `query`, in list order. */
  const ids = async (query: string, headers: Record<string, string> = {}) => {
    const response = await list(`organization=${owner.organizationId}&page_size=100${query ? `&${query}` : ''}`, headers);
    if (response.statusCode !== 200) throw new Error(`list failed: ${response.statusCode} ${response.body}`);
    return response.json().data.map((t: { id: string }) => t.id) as string[];
  };

  const named = (...names: string[]) => names.map((name) => twin[name]);

  beforeAll(async () => {
    service = await TestApp.start();
    owner = await service.tenant({ organization: 'Filters' });
    stranger = await service.tenant({ organization: 'Filters stranger' });

    // A second account of the owner's organization, to tell "is_personal" apart from "same organization".
    const admin = { authorization: `Token ${ADMIN_TOKEN}`, 'content-type': JSON_API };
    const account = await service.inject({
      method: 'POST',
      url: '/admin/accounts/',
      headers: admin,
      payload: document({ type: 'accounts', attributes: { name: 'Colleague' }, relationships: { organizations: { data: [{ type: 'organizations', id: owner.organizationId }] } } }),
    });
    const token = await service.inject({ method: 'POST', url: `/admin/accounts/${account.json().data.id}/tokens/`, headers: admin });
    colleague = { token: token.json().data.attributes.token };

    twin.paris = await create(owner, { name: 'Paris', description: 'Capital', public: true, location: point(PARIS), personality: { characteristics: ['art', 'food', 'wine'] } });
    twin.london = await create(owner, { name: 'London', location: point(LONDON), personality: { characteristics: ['art', 'food'], services: ['tea'] } });
    twin.berlin = await create(owner, { name: 'Berlin', location: point(BERLIN), personality: { characteristics: ['art'] } }, colleague.token);
    twin.nowhere = await create(owner, { name: 'Nowhere', personality: { characteristics: ['food', 'wine', 'art', 'music'] } }, colleague.token);
    twin.acting = owner.twinId;
    hiddenStranger = await create(stranger, { name: 'Stranger hidden', personality: { characteristics: ['art'] } });

    const patched = await service.inject({
      method: 'PATCH',
      url: `/my/twins/${owner.twinId}/`,
      headers: { ...owner.headers(), 'content-type': JSON_API },
      payload: document({ type: 'twins', attributes: { connections: [twin.paris, twin.london] } }),
    });
    expect(patched.statusCode).toBe(200);
  });
  afterAll(() => service.close());

  it('organization: only that organization, in created order', async () => {
    expect(await ids('')).toEqual(named('acting', 'paris', 'london', 'berlin', 'nowhere'));
    // Another organization's non-public, non-supplier twins stay invisible under the filter.
    const foreign = await list(`organization=${stranger.organizationId}`);
    expect(foreign.json().data.map((t: { id: string }) => t.id)).not.toContain(hiddenStranger);
  });

  it('is_public', async () => {
    expect(await ids('is_public=true')).toEqual(named('paris'));
    expect(await ids('is_public=false')).toEqual(named('acting', 'london', 'berlin', 'nowhere'));
  });

  it('is_supplier', async () => {
    expect(await ids('is_supplier=true')).toEqual(named('london'));
    expect(await ids('is_supplier=false')).toEqual(named('acting', 'paris', 'berlin', 'nowhere'));
  });

  it('is_personal: twins the calling account created, not the whole organization', async () => {
    expect(await ids('is_personal=true')).toEqual(named('acting', 'paris', 'london'));
    expect(await ids('is_personal=false')).toEqual(named('berlin', 'nowhere'));
    const theirs = await list(`organization=${owner.organizationId}&is_personal=true`, { authorization: `Token ${colleague.token}` });
    expect(theirs.json().data.map((t: { id: string }) => t.id)).toEqual(named('berlin', 'nowhere'));
  });

  it('characteristics: all of them', async () => {
    expect(await ids('characteristics=art,food')).toEqual(named('paris', 'london', 'nowhere'));
    expect(await ids('characteristics=wine')).toEqual(named('paris', 'nowhere'));
    expect(await ids('characteristics=art,nothing-like-this')).toEqual([]);
  });

  it('personality: other twins sharing a characteristic, most shared first', async () => {
    // Paris has art, food, wine: Nowhere shares 3, London 2, Berlin 1; the acting twin none.
    expect(await ids(`personality=${twin.paris}`)).toEqual(named('nowhere', 'london', 'berlin'));
    // Not restricted by organization: the stranger's hidden twin is still invisible.
    const all = await list(`personality=${twin.berlin}&page_size=100`);
    expect(all.json().data.map((t: { id: string }) => t.id)).not.toContain(hiddenStranger);
    // A twin the caller cannot see cannot be used as the reference.
    expectError(await list(`personality=${hiddenStranger}`), 400, { parameter: 'personality' });
    expectError(await list('personality=00000000-0000-4000-8000-000000000000'), 400, { parameter: 'personality' });
  });

  it('is_connection: the connections of the X-Twin twin; X-Twin required', async () => {
    const xTwin = { 'x-twin': owner.twinId };
    expect(await ids('is_connection=true', xTwin)).toEqual(named('paris', 'london'));
    expect(await ids('is_connection=false', xTwin)).toEqual(named('acting', 'berlin', 'nowhere'));
    expectError(await list('is_connection=true'), 400, { header: 'X-Twin' });
    expectError(await list('is_connection=true', { 'x-twin': hiddenStranger }), 403, { header: 'X-Twin' });
  });

  it('filters combine', async () => {
    expect(await ids('is_personal=true&characteristics=food&is_public=false')).toEqual(named('london'));
  });

  describe('spatial', () => {
    it('in_bbox: inside the box only', async () => {
      expect(await ids('in_bbox=0,45,15,55')).toEqual(named('paris', 'berlin'));
      expect(await ids('in_bbox=-1,51,0,52')).toEqual(named('london'));
      expect(await ids('in_bbox=-10,30,-5,35')).toEqual([]);
    });

    it('point + dist: metres on the Earth, boundaries between the known distances', async () => {
      expect(await ids(`point=${PARIS}&dist=0`)).toEqual(named('paris'));
      expect(await ids(`point=${PARIS}&dist=300000`)).toEqual(named('paris'));
      expect(await ids(`point=${PARIS}&dist=400000`)).toEqual(named('paris', 'london'));
      expect(await ids(`point=${PARIS}&dist=900000`)).toEqual(named('paris', 'london', 'berlin'));
      expect(await ids(`point=${BERLIN}&dist=900000`)).toEqual(named('paris', 'berlin'));
      expect(await ids(`point=${BERLIN}&dist=940000`)).toEqual(named('paris', 'london', 'berlin'));
    });

    it('ordering=distance: nearest first, twins without a location last', async () => {
      expect(await ids(`point=${BERLIN}&ordering=distance&dist=1000000`)).toEqual(named('berlin', 'paris', 'london'));
      // Without dist: a KNN scan; twins without a location come last (among themselves in no fixed order).
      const nearest = await ids(`point=${LONDON}&ordering=distance`);
      expect(nearest.slice(0, 3)).toEqual(named('london', 'paris', 'berlin'));
      expect(nearest.slice(3).sort()).toEqual(named('acting', 'nowhere').sort());
    });

    it.each([
      ['in_bbox=1,2,3', 'in_bbox'],
      ['in_bbox=a,b,c,d', 'in_bbox'],
      ['in_bbox=10,0,5,1', 'in_bbox'],
      ['in_bbox=0,-91,1,1', 'in_bbox'],
      ['point=200,0&dist=10', 'point'],
      ['point=1&dist=10', 'point'],
      ['point=1,2', 'point'],
      ['point=1,2&dist=-1', 'dist'],
      ['point=1,2&dist=far', 'dist'],
      ['dist=10', 'dist'],
      ['ordering=distance', 'ordering'],
      ['point=1,2&ordering=name', 'ordering'],
    ])('400 for %s', async (query, parameter) => {
      expectError(await list(query), 400, { parameter });
    });
  });

  it.each([
    ['is_public=maybe', 'is_public'],
    ['is_supplier=', 'is_supplier'],
    ['personality=not-a-uuid', 'personality'],
    ['organization=x', 'organization'],
    ['characteristics=', 'characteristics'],
    ['characteristics=a,,b', 'characteristics'],
    ['is_public=true&is_public=false', 'is_public'],
    ['search=x', 'search'],
  ])('400 naming the parameter for %s', async (query, parameter) => {
    expectError(await list(query), 400, { parameter });
  });

  describe('geo listing', () => {
    const GEO = 'application/geo+json';

    it('Accept: application/geo+json gives the FeatureCollection envelope of located twins only', async () => {
      const response = await list(`organization=${owner.organizationId}`, { accept: GEO });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/geo\+json/);
      const body = response.json();
      expect(Object.keys(body).sort()).toEqual(['data', 'links', 'meta']);
      expect(Object.keys(body.data).sort()).toEqual(['links', 'meta', 'results']);
      expect(body.meta).toEqual({ pagination: { page: 1, pages: 1, count: 3 } });
      expect(body.data.meta).toEqual(body.meta);
      expect(body.data.links).toEqual(body.links);
      expect(body.links).toEqual({ first: expect.stringContaining('page_number=1'), last: expect.stringContaining('page_number=1'), next: null, prev: null });
      expect(body.data.results.type).toBe('FeatureCollection');
      expect(body.data.results.features).toEqual([
        { id: twin.paris, type: 'Feature', geometry: point(PARIS), properties: { twin_id: twin.paris, name: 'Paris', description: 'Capital' } },
        { id: twin.london, type: 'Feature', geometry: point(LONDON), properties: { twin_id: twin.london, name: 'London', description: '' } },
        { id: twin.berlin, type: 'Feature', geometry: point(BERLIN), properties: { twin_id: twin.berlin, name: 'Berlin', description: '' } },
      ]);
    });

    it('Content-Type: application/geo+json works too, with the same filters, ordering and paging', async () => {
      const headers = { 'content-type': GEO };
      const near = await list(`organization=${owner.organizationId}&point=${BERLIN}&ordering=distance&page_size=2`, headers);
      expect(near.statusCode).toBe(200);
      expect(near.headers['content-type']).toMatch(/^application\/geo\+json/);
      const body = near.json();
      expect(body.meta.pagination).toEqual({ page: 1, pages: 2, count: 3 });
      expect(body.data.results.features.map((f: { id: string }) => f.id)).toEqual(named('berlin', 'paris'));
      expect(body.links.next).toEqual(expect.stringContaining('page_number=2'));
      const second = await service.inject({ method: 'GET', url: new URL(body.links.next).pathname + new URL(body.links.next).search, headers: { ...owner.headers(), ...headers } });
      expect(second.json().data.results.features.map((f: { id: string }) => f.id)).toEqual(named('london'));

      const bbox = (await list(`organization=${owner.organizationId}&in_bbox=0,45,15,55&is_public=true`, headers)).json();
      expect(bbox.data.results.features.map((f: { id: string }) => f.id)).toEqual(named('paris'));
    });

    it('an empty result is an empty FeatureCollection; past the last page is a 404', async () => {
      const empty = await list(`organization=${owner.organizationId}&in_bbox=-10,30,-5,35`, { accept: GEO });
      expect(empty.json()).toEqual({
        links: expect.any(Object),
        data: { results: { type: 'FeatureCollection', features: [] }, meta: { pagination: { page: 1, pages: 1, count: 0 } }, links: expect.any(Object) },
        meta: { pagination: { page: 1, pages: 1, count: 0 } },
      });
      const past = await list(`organization=${owner.organizationId}&page_number=2`, { accept: GEO });
      expectError(past, 404);
    });

    it('geo page size: default 1000, max 10000; errors are JSON:API documents', async () => {
      expect((await list(`organization=${owner.organizationId}&page_size=5000`, { accept: GEO })).statusCode).toBe(200);
      expectError(await list('page_size=10001', { accept: GEO }), 400, { parameter: 'page_size' });
      expectError(await list('is_public=perhaps', { accept: GEO }), 400, { parameter: 'is_public' });
      // Without geo, the JSON:API list keeps its own limit.
      expectError(await list('page_size=5000'), 400, { parameter: 'page_size' });
    });

    it('Accept with q=0 or other media types keeps the JSON:API list', async () => {
      const plain = await list(`organization=${owner.organizationId}`, { accept: `${GEO};q=0, application/vnd.api+json` });
      expect(plain.headers['content-type']).toMatch(/^application\/vnd\.api\+json/);
      expect(Array.isArray(plain.json().data)).toBe(true);
    });
  });
});
