import fc from 'fast-check';
import type { TwinTenant } from '../../src/common/auth/tenant';
import { canonicalJson } from '../../src/events/event-data';
import { EventsRepository } from '../../src/events/events.repository';
import { rowShape } from '../../src/database/row-shape';
import { Sql } from '../../src/database/sql';
import { uuidv7 } from '../../src/events/uuidv7';
import { recordStatements } from '../support/sql-statements';
import { embeddedDatabase, TestApp } from '../support/test-app';

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
    tenant = (await app.tenant()).asTwinTenant();
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
      timeline = (await app.tenant()).asTwinTenant();
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
          'timeline page, whole (its kept count)': await statement(() => repository.pageTimeline(timeline, {}, { number: 1, size: 50, offset: 0 })),
          'insert (POST /events/)': await statement(() => repository.insert(timeline, { id, name: 'n', category: 'c', data: {}, occurred: null }, 'events_channel')),
          'update (PATCH /events/<id>/)': await statement(() => repository.update(timeline, id, { data: { a: 1 } }, 'events_channel', { maxDataTextBytes: 1000 })),
        };
        for (const [name, text] of Object.entries(statements)) expect(text).toMatchSnapshot(name);
      } finally {
        restore();
      }
    });
  });
  /**
   * An unfiltered timeline page reads its count from twin_event_counts (migration TwinEventCounts), kept by
   * triggers on events in the writing transaction: it must equal count(*) after every kind of write.
   */
  describe('the kept count of a timeline', () => {
    const event = (name = 'counted'): { id: string; name: string; category: string; data: Record<string, unknown>; occurred: null } => ({
      id: uuidv7(),
      name,
      category: 'test',
      data: {},
      occurred: null,
    });
    /** The kept count (undefined without a row), count(*), and the unfiltered page's count. */
    async function counts(timeline: TwinTenant): Promise<{ kept: number | undefined; actual: number; page: number }> {
      const [kept] = await sql.rows(rowShape({ total: 'bigint' }), 'SELECT total FROM twin_event_counts WHERE organization_id = $1 AND twin_id = $2', [timeline.organization.id, timeline.twin.id]);
      const [actual] = await sql.rows(rowShape({ n: 'integer' }), 'SELECT count(*)::int AS n FROM events WHERE organization_id = $1 AND twin_id = $2', [timeline.organization.id, timeline.twin.id]);
      const page = await repository.pageTimeline(timeline, {}, { number: 1, size: 1, offset: 0 });
      return { kept: kept === undefined ? undefined : Number(kept.total), actual: actual.n, page: Number(page.count) };
    }

    it('follows single inserts, a batch, a taken id, deletions, and a bulk delete over many timelines', async () => {
      const [a, b] = [(await app.tenant()).asTwinTenant(), (await app.tenant()).asTwinTenant()];
      expect(await counts(a)).toEqual({ kept: undefined, actual: 0, page: 0 });
      const first = event();
      await repository.insert(a, first, null);
      expect(await repository.insert(b, { ...first }, null)).toBeUndefined(); // a taken id stores nothing, counts nothing
      await sql.transaction(() => repository.insertMany(a, [event(), event(), { ...first }, event()], null));
      expect(await counts(a)).toEqual({ kept: 4, actual: 4, page: 4 });
      expect(await counts(b)).toEqual({ kept: undefined, actual: 0, page: 0 });
      await repository.insertMany(b, [event(), event()], null);
      await repository.delete(a, first.id, null);
      expect(await counts(a)).toEqual({ kept: 3, actual: 3, page: 3 });
      // One statement over both timelines (as the retention job deletes): each loses its own.
      await sql.query('DELETE FROM events WHERE twin_id = ANY ($1::uuid[]) AND ctid = ANY (ARRAY(SELECT ctid FROM events WHERE twin_id = ANY ($1::uuid[]) ORDER BY id LIMIT 4))', [
        [a.twin.id, b.twin.id],
      ]);
      const left = [await counts(a), await counts(b)];
      expect(left[0].actual + left[1].actual).toBe(1);
      // The emptied timeline has no row; the other keeps its exact number.
      for (const c of left) expect(c).toEqual({ kept: c.actual === 0 ? undefined : c.actual, actual: c.actual, page: c.actual });
    });

    it('loses the row of a timeline that empties, also when its twin is deleted', async () => {
      const created = await app.tenant();
      const timeline = created.asTwinTenant();
      await repository.insertMany(timeline, [event(), event(), event()], null);
      expect((await counts(timeline)).kept).toBe(3);
      await sql.query('DELETE FROM twins WHERE id = $1', [timeline.twin.id]);
      const [row] = await sql.rows(rowShape({ total: 'bigint' }), 'SELECT total FROM twin_event_counts WHERE twin_id = $1', [timeline.twin.id]);
      expect(row).toBeUndefined();
    });

    it('is what the unfiltered page answers (not a count(*)), while a filtered page counts its matches', async () => {
      const timeline = (await app.tenant()).asTwinTenant();
      await repository.insertMany(timeline, [event('walk'), event('walk'), event('read')], null);
      // Altered behind the triggers' back, the kept number shows in the unfiltered page only.
      await sql.transaction(async () => {
        await sql.query('UPDATE twin_event_counts SET total = 7 WHERE organization_id = $1 AND twin_id = $2', [timeline.organization.id, timeline.twin.id]);
        expect(Number((await repository.pageTimeline(timeline, {}, { number: 1, size: 50, offset: 0 })).count)).toBe(7);
        expect(Number((await repository.pageTimeline(timeline, { name: 'walk' }, { number: 1, size: 50, offset: 0 })).count)).toBe(2);
        await sql.query('UPDATE twin_event_counts SET total = 3 WHERE organization_id = $1 AND twin_id = $2', [timeline.organization.id, timeline.twin.id]);
      });
      expect(await counts(timeline)).toEqual({ kept: 3, actual: 3, page: 3 });
    });

    it('refuses to move an event to another timeline, so the counts cannot drift', async () => {
      const [a, b] = [(await app.tenant()).asTwinTenant(), (await app.tenant()).asTwinTenant()];
      const moved = event();
      await repository.insert(a, moved, null);
      await expect(sql.query('UPDATE events SET twin_id = $2 WHERE id = $1', [moved.id, b.twin.id])).rejects.toThrow(/cannot move to another timeline/);
      await expect(sql.query('UPDATE events SET organization_id = $2 WHERE id = $1', [moved.id, b.organization.id])).rejects.toThrow(/cannot move to another timeline/);
      expect(await counts(a)).toEqual({ kept: 1, actual: 1, page: 1 });
    });

    it('stays exact under concurrent writers of one timeline', async () => {
      const timeline = (await app.tenant()).asTwinTenant();
      await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? repository.insertMany(timeline, [event(), event()], null) : repository.insert(timeline, event(), null))));
      expect(await counts(timeline)).toEqual({ kept: 16, actual: 16, page: 16 });
    });

    it('equals count(*) after any sequence of inserts, batches and deletions (property)', async () => {
      const timeline = (await app.tenant()).asTwinTenant();
      const write = fc.oneof(
        fc.record({ kind: fc.constant('insert' as const) }),
        fc.record({ kind: fc.constant('batch' as const), size: fc.integer({ min: 0, max: 6 }) }),
        fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
        fc.record({ kind: fc.constant('delete-some' as const), limit: fc.integer({ min: 1, max: 5 }) }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(write, { maxLength: 8 }), async (writes) => {
          for (const w of writes) {
            if (w.kind === 'insert') await repository.insert(timeline, event(), null);
            else if (w.kind === 'batch') await repository.insertMany(timeline, Array.from({ length: w.size }, () => event()), null);
            else if (w.kind === 'delete') {
              const ids = await sql.rows(rowShape({ id: 'uuid' }), 'SELECT id FROM events WHERE twin_id = $1 ORDER BY id', [timeline.twin.id]);
              if (ids.length > 0) await repository.delete(timeline, ids[w.pick % ids.length].id, null);
            } else {
              await sql.query('DELETE FROM events WHERE ctid = ANY (ARRAY(SELECT ctid FROM events WHERE twin_id = $1 LIMIT $2))', [timeline.twin.id, w.limit]);
            }
          }
          const c = await counts(timeline);
          return (c.kept ?? 0) === c.actual && c.page === c.actual && c.kept !== 0;
        }),
        { numRuns: 25 },
      );
    });
  });

  /**
   * A twin's change positions are drawn under one lock per twin, so they are in commit order (what a
   * stream resuming from a position relies on). A batch takes it once and draws its own positions
   * (migration ChangeLogBatchPositions); a single write draws through the table's trigger: each must
   * wait for the other's open transaction, and neither may hold up another twin.
   */
  describe('change positions of a twin, batch or single', () => {
    // Concurrent transactions: the embedded database is one session.
    const concurrent = embeddedDatabase() ? it.skip : it;
    const event = () => ({ id: uuidv7(), name: 'ordered', category: 'test', data: {}, occurred: null });
    const settledWithin = async (work: Promise<unknown>, ms: number) => Promise.race([work.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), ms))]);

    /** Runs `first` in a transaction left open until `second` has been started and given time to finish. */
    async function whileOpen<A, B>(first: () => Promise<A>, second: () => Promise<B>): Promise<{ first: A; second: B; waited: boolean }> {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let written!: () => void;
      const done = new Promise<void>((resolve) => (written = resolve));
      const open = sql.transaction(async () => {
        const result = await first();
        written();
        await gate;
        return result;
      });
      await done;
      const later = second();
      const waited = !(await settledWithin(later, 300));
      release();
      return { first: await open, second: await later, waited };
    }

    // The single write is an update: inserts of a twin also queue on its twin_event_counts row, which
    // would hide a missing position lock.
    concurrent('a single change waits for an open batch and draws after it, and a batch for an open single change', async () => {
      const timeline = (await app.tenant()).asTwinTenant();
      const existing = event();
      await repository.insert(timeline, existing, null);
      const afterBatch = await whileOpen(
        () => repository.insertMany(timeline, [event(), event(), event()], null),
        () => repository.update(timeline, existing.id, { data: { n: 1 } }, null),
      );
      expect(afterBatch.waited).toBe(true);
      const batchPositions = afterBatch.first.map((change) => BigInt(change.position));
      expect(batchPositions.every((position) => BigInt(afterBatch.second!.position) > position)).toBe(true);

      const afterSingle = await whileOpen(
        () => repository.update(timeline, existing.id, { data: { n: 2 } }, null),
        () => repository.insertMany(timeline, [event(), event()], null),
      );
      expect(afterSingle.waited).toBe(true);
      expect(afterSingle.second.every((change) => BigInt(change.position) > BigInt(afterSingle.first!.position))).toBe(true);
    });

    concurrent('an open batch of one twin does not hold up another twin', async () => {
      const [one, other] = [(await app.tenant()).asTwinTenant(), (await app.tenant()).asTwinTenant()];
      const { waited } = await whileOpen(
        () => repository.insertMany(one, [event(), event()], null),
        () => repository.insertMany(other, [event()], null),
      );
      expect(waited).toBe(false);
    });
  });
});
