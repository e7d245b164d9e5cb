import { EventRetention } from '../../src/events/event-retention';
import { document, JSON_API, TestApp, TestTenant } from '../support/test-app';

/**
 * EVENT_RETENTION_DAYS (src/events/event-retention.ts): events older than the retention are deleted a
 * bounded batch at a time, newer ones stay, and the change log is not touched (no stream messages or
 * webhooks for housekeeping).
 */
describe('event retention', () => {
  let app: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    app = await TestApp.start({ EVENT_RETENTION_DAYS: '30' });
    tenant = await app.tenant({ organization: 'Retention org', twin: 'Retained' });
  });
  afterAll(() => app.close());

  async function create(name: string): Promise<string> {
    const response = await app.inject({
      method: 'POST',
      url: '/events/',
      headers: { ...tenant.headers({ twin: true }), 'content-type': JSON_API },
      payload: document({ type: 'events', attributes: { name, category: 'retention', data: {} } }),
    });
    expect(response.statusCode).toBe(201);
    return response.json().data.id as string;
  }

  const remaining = async (): Promise<string[]> =>
    (await app.dataSource.query(`SELECT name FROM events WHERE twin_id = $1 ORDER BY name`, [tenant.twinId])).map((row: { name: string }) => row.name);
  const changeCount = async (): Promise<number> =>
    (await app.dataSource.query(`SELECT count(*)::int AS n FROM changes WHERE twin_id = $1`, [tenant.twinId]))[0].n;

  it('deletes events older than the retention batch by batch, keeps newer ones and every change', async () => {
    const retention = app.app.get(EventRetention);
    const old = [];
    for (let i = 0; i < 5; i++) old.push(await create(`old ${i}`));
    await create('recent');
    await create('fresh');
    // 31 days ago for the old ones; 29 days ago for one that must stay (inside the retention).
    await app.dataSource.query(`UPDATE events SET "timestamp" = now() - interval '31 days' WHERE id = ANY ($1::uuid[])`, [old]);
    await app.dataSource.query(`UPDATE events SET "timestamp" = now() - interval '29 days' WHERE twin_id = $1 AND name = 'recent'`, [tenant.twinId]);
    const changesBefore = await changeCount();
    expect(changesBefore).toBe(7);
    // Another suite's events past the retention (a shared test database) would take the first batch: gone first.
    await app.dataSource.query(`DELETE FROM events WHERE "timestamp" < now() - interval '30 days' AND twin_id <> $1`, [tenant.twinId]);

    expect(await retention.purgeBatch(30, 2)).toBe(2);
    expect((await remaining()).filter((name) => name.startsWith('old'))).toHaveLength(3);
    expect(await retention.purge(30, 2)).toBe(3);
    expect(await remaining()).toEqual(['fresh', 'recent']);
    expect(await retention.purgeBatch(30, 2)).toBe(0);
    expect(await changeCount()).toBe(changesBefore);

    // The events that stay are still served.
    const page = await app.inject({ method: 'GET', url: '/events/', headers: tenant.headers({ twin: true }) });
    expect(page.statusCode).toBe(200);
    expect(page.json().data.map((e: { attributes: { name: string } }) => e.attributes.name).sort()).toEqual(['fresh', 'recent']);
  });

  it('a retention of 0 keeps everything', async () => {
    const id = await create('ancient');
    await app.dataSource.query(`UPDATE events SET "timestamp" = now() - interval '3650 days' WHERE id = $1`, [id]);
    expect(await app.app.get(EventRetention).purge(0)).toBe(0);
    expect(await remaining()).toContain('ancient');
  });
});
