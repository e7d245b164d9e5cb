import type { TwinTenant } from '../../src/common/auth/tenant';
import { canonicalJson } from '../../src/events/event-data';
import { EventsRepository } from '../../src/events/events.repository';
import { Sql } from '../../src/database/sql';
import { uuidv7 } from '../../src/events/uuidv7';
import { recordStatements } from '../support/sql-statements';
import { TestApp, TestTenant } from '../support/test-app';

/**
 * The PATCH merge of event data is one SQL statement on the stored jsonb (EventsRepository.update):
 * its rules are checked here against the database itself, with member names that a merge of
 * JavaScript objects would get wrong.
 */
describe('EventsRepository.update: the data merge in PostgreSQL', () => {
  let app: TestApp;
  let repository: EventsRepository;
  let sql: Sql;
  let tenant: TwinTenant;

  beforeAll(async () => {
    app = await TestApp.start();
    repository = app.app.get(EventsRepository);
    sql = app.app.get(Sql);
    const created: TestTenant = await app.tenant();
    tenant = {
      account: { id: created.accountId, name: 'Test account' },
      organization: { id: created.organizationId, name: 'Test organization' },
      twin: { id: created.twinId },
      tokenId: created.tokenId,
    };
  });
  afterAll(() => app.close());

  /** Stores `stored`, applies `patch` through the repository, returns the data as PostgreSQL holds it. */
  async function merge(stored: unknown, patch: unknown): Promise<unknown> {
    const id = uuidv7();
    await repository.insert(tenant, { id, name: 'merge', category: 'test', data: stored as Record<string, unknown>, occurred: null }, null);
    const updated = await sql.transaction(() => repository.update(tenant, id, { data: patch as Record<string, unknown> }, null));
    const [row] = await app.dataSource.query('SELECT data::text AS data FROM events WHERE id = $1', [id]);
    expect(updated?.data).toEqual(JSON.parse(row.data));
    return JSON.parse(row.data);
  }

  it('with a bound on the merged data text, changes nothing and answers undefined when the merge is over it', async () => {
    const id = uuidv7();
    await repository.insert(tenant, { id, name: 'bound', category: 'test', data: { a: 'x'.repeat(50) }, occurred: null }, null);
    // jsonb text of the merge: {"a": "xx…x", "b": 1} = 67 bytes.
    expect(await repository.update(tenant, id, { data: { b: 1 } }, null, { maxDataTextBytes: 66 })).toBeUndefined();
    const [unchanged] = await app.dataSource.query('SELECT data FROM events WHERE id = $1', [id]);
    expect(unchanged.data).toEqual({ a: 'x'.repeat(50) });
    expect((await repository.update(tenant, id, { data: { b: 1 } }, null, { maxDataTextBytes: 67 }))?.data).toEqual({ a: 'x'.repeat(50), b: 1 });
  });

  it('sets named keys and keeps the others', async () => {
    expect(await merge({ a: 1, b: 2 }, { b: 3, c: 4 })).toEqual({ a: 1, b: 3, c: 4 });
  });

  it('removes exactly the keys set to null, and keeps stored nulls the patch does not name', async () => {
    expect(await merge({ a: 1, b: 2, keep: null }, { a: null })).toEqual({ b: 2, keep: null });
  });

  it('replaces nested objects wholesale and keeps nested nulls as values', async () => {
    expect(await merge({ nested: { z: 1 } }, { nested: { x: null, y: 2 } })).toEqual({ nested: { x: null, y: 2 } });
  });

  it('keeps falsy values that are not null', async () => {
    expect(await merge({}, { zero: 0, empty: '', no: false, list: [], object: {} })).toEqual({ zero: 0, empty: '', no: false, list: [], object: {} });
  });

  it('an empty patch, or none, changes nothing', async () => {
    expect(await merge({ a: 1 }, {})).toEqual({ a: 1 });
    expect(await merge({ a: 1 }, undefined)).toEqual({ a: 1 });
  });

  it('treats the names of Object.prototype members as ordinary keys', async () => {
    const stored = JSON.parse('{"__proto__": {"x": 1}, "constructor": "c", "toString": 1, "keep": true}');
    const patch = JSON.parse('{"__proto__": null, "constructor": {"prototype": 2}, "valueOf": [1], "hasOwnProperty": null}');
    // Compared as canonical text: toEqual would not see an own "__proto__" member.
    expect(canonicalJson(await merge(stored, patch))).toBe('{"constructor":{"prototype":2},"keep":true,"toString":1,"valueOf":[1]}');
  });

  describe('the timeline page', () => {
    let timeline: TwinTenant;
    const at = (minute: number) => `2026-03-01T10:${String(minute).padStart(2, '0')}:00.000001Z`;

    beforeAll(async () => {
      const created: TestTenant = await app.tenant();
      timeline = { account: { id: created.accountId, name: 'Test account' }, organization: { id: created.organizationId, name: 'Test organization' }, twin: { id: created.twinId }, tokenId: created.tokenId };
      const rows = [
        ['e1', 'walk', 'sport', 1],
        ['e2', 'walk', 'leisure', 2],
        ['e3', 'read', 'leisure', 3],
        ['e4', 'walk', 'sport', 4],
      ] as const;
      for (const [name, event, category, minute] of rows) {
        await sql.query('INSERT INTO events (id, organization_id, twin_id, name, category, data, "timestamp") VALUES ($1, $2, $3, $4, $5, $6, $7)', [
          uuidv7(),
          timeline.organization.id,
          timeline.twin.id,
          event,
          category,
          { label: name },
          at(minute),
        ]);
      }
    });

    const labels = async (filter: Parameters<EventsRepository['pageTimeline']>[1], page = { number: 1, size: 50, offset: 0 }) => {
      const counted = await repository.pageTimeline(timeline, filter, page);
      return { count: Number(counted.count), labels: (JSON.parse(counted.data) as { attributes: { data: { label: string } } }[]).map((e) => e.attributes.data.label) };
    };

    it('is newest first, filtered by name, category, since (inclusive) and until (exclusive), and counted exactly', async () => {
      expect(await labels({})).toEqual({ count: 4, labels: ['e4', 'e3', 'e2', 'e1'] });
      expect(await labels({ name: 'walk' })).toEqual({ count: 3, labels: ['e4', 'e2', 'e1'] });
      expect(await labels({ name: 'walk', category: 'sport' })).toEqual({ count: 2, labels: ['e4', 'e1'] });
      expect(await labels({ since: at(2), until: at(4) })).toEqual({ count: 2, labels: ['e3', 'e2'] });
      expect(await labels({}, { number: 2, size: 3, offset: 3 })).toEqual({ count: 4, labels: ['e1'] });
      expect(await labels({}, { number: 3, size: 3, offset: 6 })).toEqual({ count: 4, labels: [] });
    });

    it('sends the statements committed in the snapshot', async () => {
      const { statement, restore } = recordStatements(sql);
      try {
        const id = uuidv7();
        const statements = {
          'timeline page, filtered': await statement(() => repository.pageTimeline(timeline, { name: 'walk', since: at(1) }, { number: 1, size: 50, offset: 0 })),
          'insert (POST /events/)': await statement(() => repository.insert(timeline, { id, name: 'n', category: 'c', data: {}, occurred: null }, 'events_channel')),
          'update (PATCH /events/<id>/)': await statement(() => repository.update(timeline, id, { data: { a: 1 } }, 'events_channel', { maxDataTextBytes: 1000 })),
        };
        for (const [name, text] of Object.entries(statements)) expect(text).toMatchSnapshot(name);
      } finally {
        restore();
      }
    });
  });
});
