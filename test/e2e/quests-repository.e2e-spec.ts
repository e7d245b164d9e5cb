import { randomUUID } from 'node:crypto';
import { QuestListing1763940000000 } from '../../db/migrations/1763940000000-QuestListing';
import type { TwinTenant } from '../../src/common/auth/tenant';
import { rowShape } from '../../src/database/row-shape';
import { Sql } from '../../src/database/sql';
import { QuestsRepository } from '../../src/quests/quests.repository';
import { recordStatements } from '../support/sql-statements';
import { embeddedDatabase, TestApp, type TestTenant } from '../support/test-app';

/**
 * QuestsRepository's discovery filters and embark, straight against the database (both kinds), and
 * their SQL committed as snapshots (see twins-repository.e2e-spec.ts). Names carry a marker made for
 * this run, so other tests' quests never match.
 */
const PLAIN = { imagesBase: 'http://x/images/', fields: {}, include: new Set<string>() };

describe('QuestsRepository (SQL)', () => {
  let app: TestApp;
  let quests: QuestsRepository;
  let sql: Sql;
  const LISTED = rowShape({ listed: 'boolean' });
  let maker: TwinTenant;
  let hidden: TwinTenant;
  let caller: TwinTenant;
  const marker = `q${randomUUID().slice(0, 8)}`;
  const ids: Record<string, string> = {};
  const tenantOf = (created: TestTenant): TwinTenant => created.asTwinTenant();

  beforeAll(async () => {
    app = await TestApp.start();
    quests = app.app.get(QuestsRepository);
    sql = app.app.get(Sql);
    maker = tenantOf(await app.tenant());
    hidden = tenantOf(await app.tenant());
    caller = tenantOf(await app.tenant());
    // The maker's twin is public, so its public quests are in everyone's feed; the hidden one's twin is not.
    await sql.query('UPDATE twins SET public = true WHERE id = $1', [maker.twin.id]);
    const add = async (name: string, owner: TwinTenant, description: string, isPublic: boolean) => {
      ids[name] = await quests.insert(owner, { name: `${marker} ${name}`, summary: '', description, summaryImageId: null, price: '1.50' });
      await sql.query('UPDATE quests SET public = $2, created = $3 WHERE id = $1', [ids[name], isPublic, `2026-02-0${Object.keys(ids).length}T00:00:00Z`]);
    };
    await add('River walk', maker, 'Along the river', true);
    await add('Museum tour', maker, 'Old maps and river boats', true);
    await add('Draft', maker, 'Not published', false);
    await add('Hidden walk', hidden, 'A walk nobody outside can see', true);
  });
  afterAll(() => app.close());

  const feed = async (filters: Parameters<QuestsRepository['page']>[2]) => {
    const counted = await quests.page('discovery', caller, { name: marker, ...filters }, { number: 1, size: 50, offset: 0 }, PLAIN);
    const byId = Object.fromEntries(Object.entries(ids).map(([name, id]) => [id, name]));
    return { count: Number(counted.count), names: (JSON.parse(counted.data) as { id: string }[]).map((quest) => byId[quest.id] ?? quest.id) };
  };

  it('the discovery feed: public quests of visible twins, newest first, filtered by name, description and owner', async () => {
    expect(await feed({})).toEqual({ count: 2, names: ['Museum tour', 'River walk'] });
    expect(await feed({ description: 'RIVER' })).toEqual({ count: 2, names: ['Museum tour', 'River walk'] });
    expect(await feed({ name: `${marker} river` })).toEqual({ count: 1, names: ['River walk'] });
    expect(await feed({ owned_by: maker.twin.id })).toEqual({ count: 2, names: ['Museum tour', 'River walk'] });
    expect(await feed({ owned_by: hidden.twin.id })).toEqual({ count: 0, names: [] });
  });

  const listed = async (name: string): Promise<boolean> =>
    (await sql.one(LISTED, 'SELECT listed FROM quests WHERE id = $1', [ids[name]])).listed;

  it("the feed follows its twins' sharing: `listed` is kept by triggers, and cannot be set by hand", async () => {
    // The hidden twin becomes a supplier (services): its public quest enters every feed; without services it leaves.
    await sql.query(`UPDATE twins SET services = ARRAY['guided walks'] WHERE id = $1`, [hidden.twin.id]);
    expect(await feed({})).toEqual({ count: 3, names: ['Hidden walk', 'Museum tour', 'River walk'] });
    await sql.query(`UPDATE twins SET services = '{}' WHERE id = $1`, [hidden.twin.id]);
    expect(await feed({})).toEqual({ count: 2, names: ['Museum tour', 'River walk'] });
    // Its own organization sees it all along.
    const own = await quests.page('discovery', hidden, { name: marker }, { number: 1, size: 50, offset: 0 }, PLAIN);
    expect(Number(own.count)).toBe(3);
    // A quest made public on a shared twin enters the feed; private again, it leaves.
    await sql.query('UPDATE quests SET public = true WHERE id = $1', [ids['Draft']]);
    expect(await feed({})).toEqual({ count: 3, names: ['Draft', 'Museum tour', 'River walk'] });
    await sql.query('UPDATE quests SET public = false WHERE id = $1', [ids['Draft']]);
    expect([await listed('Draft'), (await feed({})).count]).toEqual([false, 2]);
    // Written by hand, `listed` is computed all the same.
    await sql.query('UPDATE quests SET listed = true WHERE id = ANY ($1::uuid[])', [[ids['Hidden walk'], ids['Draft']]]);
    expect([await listed('Hidden walk'), await listed('Draft'), (await feed({})).count]).toEqual([false, false, 2]);
    await sql.query('UPDATE quests SET listed = false WHERE id = $1', [ids['River walk']]);
    expect(await listed('River walk')).toBe(true);
    const inserted = await sql.rows(
      LISTED,
      `INSERT INTO quests (organization_id, twin_id, name, listed) VALUES ($1, $2, 'Private, listed by hand', true) RETURNING listed`,
      [maker.organization.id, maker.twin.id],
    );
    expect(inserted).toEqual([{ listed: false }]);
  });

  it('the migration fills `listed` for the quests already there, and its down step removes it (in a transaction rolled back)', async () => {
    const migration = new QuestListing1763940000000();
    const runner = app.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await migration.down(runner);
      const columns = await runner.query(`SELECT 1 FROM information_schema.columns WHERE table_name = 'quests' AND column_name = 'listed'`);
      expect(columns).toEqual([]);
      await migration.up(runner);
      const rows: { id: string; listed: boolean }[] = await runner.query('SELECT id, listed FROM quests WHERE id = ANY ($1::uuid[]) ORDER BY name', [Object.values(ids)]);
      const byName = Object.fromEntries(Object.entries(ids).map(([name, id]) => [name, rows.find((row) => row.id === id)?.listed]));
      expect(byName).toEqual({ 'River walk': true, 'Museum tour': true, Draft: false, 'Hidden walk': false });
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
    expect(await feed({})).toEqual({ count: 2, names: ['Museum tour', 'River walk'] });
  });

  /**
   * A twin's change of sharing and a quest made public, in two sessions at once, in either order: the second
   * waits for the first to commit and then sees it (migration QuestListing), so `listed` is never stale.
   */
  (embeddedDatabase() ? it.skip : it)('a quest made public while its twin stops being shared, in either order, ends unlisted (needs real PostgreSQL)', async () => {
    const waitingFor = async (statementStart: string) => {
      for (let tries = 0; tries < 100; tries++) {
        const rows: unknown[] = await app.dataSource.query(
          `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
          [`${statementStart}%`],
        );
        if (rows.length > 0) return true;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return false;
    };
    const unshareTwin = `UPDATE twins SET public = false WHERE id = '${maker.twin.id}'`;
    const publishDraft = `UPDATE quests SET public = true WHERE id = '${ids['Draft']}'`;
    for (const [first, second] of [
      [unshareTwin, publishDraft],
      [publishDraft, unshareTwin],
    ]) {
      const holder = app.dataSource.createQueryRunner();
      await holder.connect();
      try {
        await holder.startTransaction();
        await holder.query(first);
        const waiting = sql.query(second);
        expect(await waitingFor(second)).toBe(true);
        await holder.commitTransaction();
        await waiting;
        expect([await listed('Draft'), await listed('River walk'), (await feed({})).count]).toEqual([false, false, 0]);
      } finally {
        if (holder.isTransactionActive) await holder.rollbackTransaction();
        await holder.release();
        await sql.query('UPDATE quests SET public = false WHERE id = $1', [ids['Draft']]);
        await sql.query('UPDATE twins SET public = true WHERE id = $1', [maker.twin.id]);
      }
    }
    expect([await listed('Draft'), await listed('River walk'), await feed({})]).toEqual([false, true, { count: 2, names: ['Museum tour', 'River walk'] }]);
  });

  it('embark: a copy for the acting twin; a quest it cannot read is not found', async () => {
    const changesBefore = Number((await app.dataSource.query(`SELECT count(*) AS n FROM changes WHERE kind = 'quest.embarked' AND twin_id = $1`, [caller.twin.id]))[0].n);
    const outcome = await quests.embark(caller, ids['River walk'], PLAIN.imagesBase);
    expect(outcome).toMatchObject({ readable: true, mine: false, is_copy: false });
    const answered = JSON.parse(outcome!.copy!);
    expect(answered).toMatchObject({
      type: 'quests',
      attributes: { 'task-count': 0, public: false, price: 1.5 },
      relationships: { twin: { data: { type: 'twins', id: caller.twin.id } }, original: { data: { type: 'quests', id: ids['River walk'] } } },
    });
    expect(await quests.embark(caller, ids['Hidden walk'], PLAIN.imagesBase)).toMatchObject({ readable: false, copy: null });
    // The copy's change is recorded by the same statement (webhook quest.embarked); a refused embark records none.
    const recorded: { subject_id: string; resource: string }[] = await app.dataSource.query(
      `SELECT subject_id, resource FROM changes WHERE kind = 'quest.embarked' AND twin_id = $1 ORDER BY position`,
      [caller.twin.id],
    );
    expect(recorded).toHaveLength(changesBefore + 1);
    // The answer is the recorded resource itself, text for text.
    expect(recorded[recorded.length - 1]).toEqual({ subject_id: answered.id, resource: outcome!.copy });
  });

  // Two sessions at once: the embedded database has one.
  (embeddedDatabase() ? it.skip : it)("embark: waits for a place another transaction holds without holding its twin's change-log lock (needs real PostgreSQL)", async () => {
    const questId = await quests.insert(maker, { name: `${marker} Harbour walk`, summary: '', description: '', summaryImageId: null, price: '2.00' });
    await sql.query('UPDATE quests SET public = true WHERE id = $1', [questId]);
    await quests.insertTask(maker, questId, { name: 'Quay', description: '', position: undefined, placeTwinId: maker.twin.id });
    const embarking = tenantOf(await app.tenant());
    const holder = app.dataSource.createQueryRunner();
    await holder.connect();
    try {
      await holder.startTransaction();
      await holder.query('SELECT id FROM twins WHERE id = $1 FOR UPDATE', [maker.twin.id]);
      const outcome = quests.embark(embarking, questId, PLAIN.imagesBase);
      // The embark's session, once it waits for the place: whether it holds an advisory (change-log) lock.
      let waiting: { advisory_locks: number }[] = [];
      for (let tries = 0; tries < 100 && waiting.length === 0; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        waiting = await app.dataSource.query(
          `SELECT (SELECT count(*)::int FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted) AS advisory_locks
             FROM pg_stat_activity a
            WHERE a.datname = current_database() AND a.wait_event_type = 'Lock' AND a.query LIKE 'WITH quest AS (%'`,
        );
      }
      expect(waiting).toEqual([{ advisory_locks: 0 }]);
      await holder.rollbackTransaction();
      expect(JSON.parse((await outcome)!.copy!)).toMatchObject({
        attributes: { 'task-count': 1 },
        relationships: { twin: { data: { id: embarking.twin.id } }, original: { data: { id: questId } } },
      });
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
  });

  it('sends the statements committed in the snapshot', async () => {
    const { statement, restore } = recordStatements(sql);
    try {
      const statements = {
        'discovery feed, filtered': await statement(() => quests.page('discovery', caller, { name: marker, owned_by: maker.twin.id }, { number: 1, size: 50, offset: 0 }, PLAIN)),
        embark: await statement(() => quests.embark(caller, ids['Museum tour'], PLAIN.imagesBase)),
      };
      for (const [name, text] of Object.entries(statements)) expect(text).toMatchSnapshot(name);
    } finally {
      restore();
    }
  });
});
