import { QuestClient } from '../support/quests';
import { expectError, TestApp, TestTenant } from '../support/test-app';

describe('revenue: GET /my/quests/total_revenue', () => {
  let service: TestApp;
  let q: QuestClient;

  beforeAll(async () => {
    service = await TestApp.start();
    q = new QuestClient(service);
  });
  afterAll(() => service.close());

  const total = (tenant: TestTenant, twin: string | boolean = true, url = '/my/quests/total_revenue') =>
    service.inject({ method: 'GET', url, headers: tenant.headers({ twin }) });

  it('a bare {revenue: 0} before any embark (not captured by /my/quests/<QUEST_ID>)', async () => {
    const alpha = await service.tenant({ organization: 'Revenue zero' });
    for (const url of ['/my/quests/total_revenue', '/my/quests/total_revenue/']) {
      const response = await total(alpha, true, url);
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe('{"revenue":0}');
    }
  });

  it('three embarks at 0.10 make exactly 0.3', async () => {
    const creator = await service.tenant({ organization: 'Revenue creator', twin: 'Seller' });
    const quest = await q.published(creator, { name: 'Dime quest', price: '0.10' });
    for (let i = 0; i < 3; i++) {
      const walker = await q.twin(creator, { name: `Walker ${i}` });
      expect((await q.embark(creator, quest.id, walker)).statusCode).toBe(201);
    }
    const response = await total(creator);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ revenue: 0.3 });
    expect(response.body).toBe('{"revenue":0.3}');
    expect(Object.keys(response.json())).toEqual(['revenue']);
  });

  it('sums exactly across quests and organizations, and counts only quests the acting twin created', async () => {
    const creator = await service.tenant({ organization: 'Revenue multi', twin: 'Multi seller' });
    await q.setTwinPublic(creator.twinId, true);
    const cheap = await q.published(creator, { name: 'Cheap', price: 0.01 });
    const dear = await q.published(creator, { name: 'Dear', price: '9999999999.99' });
    const free = await q.published(creator, { name: 'Free' });
    const buyers = [await service.tenant({ organization: 'Buyer one' }), await service.tenant({ organization: 'Buyer two' })];
    for (const buyer of buyers) {
      for (const quest of [cheap, dear, free]) expect((await q.embark(buyer, quest.id)).statusCode).toBe(201);
    }
    // 2 × 0.01 + 2 × 9999999999.99 = 20000000000.00 exactly in SQL; a JSON number at the edge.
    const rows: { total: string }[] = await service.dataSource.query(
      `SELECT sum(r.amount)::text AS total FROM revenue_entries r JOIN quests q ON q.id = r.quest_id WHERE q.twin_id = $1`,
      [creator.twinId],
    );
    expect(rows[0].total).toBe('20000000000.00');
    expect((await total(creator)).json()).toEqual({ revenue: 20000000000 });

    // Buyers earned nothing (their copies have no revenue), nor did another twin of the creator's organization.
    for (const buyer of buyers) expect((await total(buyer)).json()).toEqual({ revenue: 0 });
    const sibling = await q.twin(creator);
    expect((await total(creator, sibling)).json()).toEqual({ revenue: 0 });
  });

  it('a price change before anyone embarks applies to later embarks only; a started quest keeps its price', async () => {
    const creator = await service.tenant({ organization: 'Revenue repricing' });
    const quest = await q.published(creator, { name: 'Repriced', price: '1.00' });
    expect((await q.patch(creator, quest.id, { price: '2.35' })).statusCode).toBe(200);
    await q.embark(creator, quest.id, await q.twin(creator));
    expectError(await q.patch(creator, quest.id, { price: '5' }), 409);
    await q.embark(creator, quest.id, await q.twin(creator));
    expect((await total(creator)).json()).toEqual({ revenue: 4.7 });
  });

  it('needs X-Twin of the organization; refuses query parameters', async () => {
    const alpha = await service.tenant({ organization: 'Revenue headers' });
    const other = await service.tenant({ organization: 'Revenue other' });
    expectError(await total(alpha, false), 400, { header: 'X-Twin' });
    expectError(await total(alpha, other.twinId), 403, { header: 'X-Twin' });
    expectError(await total(alpha, true, '/my/quests/total_revenue?since=2020'), 400, { parameter: 'since' });
  });
});
