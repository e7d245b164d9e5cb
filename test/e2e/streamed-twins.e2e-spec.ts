import { Client } from 'pg';
import type { TwinTenant } from '../../src/common/auth/tenant';
import { readLastEventId, type StreamMessage } from '../../src/events/event-streams';
import { EventsService } from '../../src/events/events.service';
import { EVENTS_CHANNEL } from '../../src/events/event-bus';
import { DatabaseNotifications } from '../../src/database/notifications';
import { embeddedDatabase, TestApp } from '../support/test-app';

/**
 * Changes are announced (NOTIFY) only for the twins someone streams (migration StreamedTwins,
 * src/events/streamed-twins.ts): what is announced, when the registration comes and goes, and the race
 * between a registration and a write of the same twin. The embedded database delivers in process
 * (EVENT_BUS=memory) and registers nothing.
 */
const describeOnPostgres = embeddedDatabase() ? describe.skip : describe;

type Iterator = AsyncIterableIterator<StreamMessage>;

describeOnPostgres('streamed twins: only the changes of streamed twins are announced', () => {
  let app: TestApp;
  let events: EventsService;
  let listener: Client;
  let tenant: TwinTenant;
  const announced: { twin_id: string; subject_id: string; position: string }[] = [];

  beforeAll(async () => {
    app = await TestApp.start({ EVENT_BUS: 'postgres', EVENT_STREAM_HEARTBEAT_MS: '30000' });
    events = app.app.get(EventsService);
    tenant = (await app.tenant({ organization: 'Streamed twins org', twin: 'Watched' })).asTwinTenant();
    listener = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await listener.connect();
    listener.on('notification', (message) => announced.push(JSON.parse(message.payload ?? '{}')));
    await listener.query(`LISTEN ${EVENTS_CHANNEL}`);
  });
  afterAll(async () => {
    await listener.end();
    await app.close();
  });

  const create = (name: string, on = tenant) =>
    events.create(on, { attributes: { name, category: 'registry', data: { name } }, present: new Set(['name', 'category', 'data']), relationships: {} }, undefined);

  const siblingOf = async (name: string): Promise<TwinTenant> => {
    const [twin] = await app.dataSource.query(`INSERT INTO twins (organization_id, name) VALUES ($1, $2) RETURNING id`, [tenant.organization.id, name]);
    return { ...tenant, twin: { ...tenant.twin, id: twin.id as string } };
  };

  const registrations = async (twinId: string): Promise<number> =>
    Number((await app.dataSource.query(`SELECT count(*) AS n FROM streamed_twins WHERE twin_id = $1`, [twinId]))[0].n);

  /** Waits until a notification of `subjectId` arrived (notifications come in commit order). */
  async function announcedOf(subjectId: string): Promise<void> {
    const until = Date.now() + 5000;
    while (!announced.some((a) => a.subject_id === subjectId)) {
      if (Date.now() > until) throw new Error(`${subjectId} was not announced`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async function nextChange(stream: Iterator): Promise<Extract<StreamMessage, { type: 'change' }>> {
    for (;;) {
      const next = await stream.next();
      if (next.done) throw new Error('the stream ended');
      if (next.value.type === 'change') return next.value;
    }
  }

  it('a change of a twin nobody streams is not announced; one of a streamed twin is, until its last stream closes', async () => {
    const quiet = await siblingOf('Quiet');
    const unwatched = await create('unwatched', quiet);

    const first = await events.stream(tenant, undefined);
    const second = await events.stream(tenant, undefined);
    expect(await registrations(tenant.twin.id)).toBe(1);
    const watched = await create('watched');
    await announcedOf(watched.id);
    // Committed before the watched one, so it would have been announced first.
    expect(announced.some((a) => a.subject_id === unwatched.id)).toBe(false);
    expect((await nextChange(first)).id).toBe(watched.id);
    expect((await nextChange(second)).id).toBe(watched.id);

    await first.return?.();
    expect(await registrations(tenant.twin.id)).toBe(1);
    const stillWatched = await create('still watched');
    await announcedOf(stillWatched.id);
    expect((await nextChange(second)).id).toBe(stillWatched.id);

    await second.return?.();
    const until = Date.now() + 5000;
    while ((await registrations(tenant.twin.id)) > 0) {
      if (Date.now() > until) throw new Error('the registration outlived its last stream');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const afterwards = await create('afterwards');
    const marker = await siblingOf('Marker');
    const markerStream = await events.stream(marker, undefined);
    const markerEvent = await create('marker', marker);
    await announcedOf(markerEvent.id);
    expect(announced.some((a) => a.subject_id === afterwards.id)).toBe(false);
    await markerStream.return?.();
  });

  it('a stream opened again right after the last one of its twin closed is registered and announced', async () => {
    const twin = await siblingOf('Reopened');
    for (let round = 0; round < 10; round++) {
      const first = await events.stream(twin, undefined);
      await first.return?.();
      // The removal starts as the stream closes; the registration that follows must survive it.
      const again = await events.stream(twin, undefined);
      expect(await registrations(twin.twin.id)).toBe(1);
      const written = await create(`round ${round}`, twin);
      await announcedOf(written.id);
      expect((await nextChange(again)).id).toBe(written.id);
      await again.return?.();
    }
  });

  it("ends every stream when the instance's listening connection drops (what was announced meanwhile is lost; clients resume from the log)", async () => {
    const twin = await siblingOf('Dropped');
    const stream = await events.stream(twin, undefined);
    const before = await create('before the drop', twin);
    expect((await nextChange(stream)).id).toBe(before.id);
    // This app's own listening connection, not another test file's.
    const listening = (app.app.get(DatabaseNotifications) as unknown as { client?: { processID?: number } }).client;
    expect(listening?.processID).toEqual(expect.any(Number));
    await app.dataSource.query(`SELECT pg_terminate_backend($1)`, [listening!.processID]);
    const ended = await Promise.race([
      (async () => {
        for (;;) if ((await stream.next()).done) return true;
      })(),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5000)),
    ]);
    expect(ended).toBe(true);
    // Once listening again, a new stream of the twin is announced to as before.
    const until = Date.now() + 10_000;
    while (!app.app.get(DatabaseNotifications).listening) {
      if (Date.now() > until) throw new Error('the listening connection did not come back');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const again = await events.stream(twin, undefined);
    const after = await create('after the drop', twin);
    expect((await nextChange(again)).id).toBe(after.id);
    await again.return?.();
  });

  it('a write that waited for the twin behind a registration sees it and is announced (the registry is read after the lock)', async () => {
    const twin = await siblingOf('Raced');
    // A registration caught between its lock and its commit, as StreamedTwins makes it, by hand.
    const registering = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await registering.connect();
    try {
      await registering.query('BEGIN');
      await registering.query(`SELECT pg_advisory_xact_lock(change_log_lock_key($1))`, [twin.twin.id]);
      await registering.query(`INSERT INTO streamed_twins (twin_id, instance_id, expires) VALUES ($1, gen_random_uuid(), now() + interval '1 minute')`, [twin.twin.id]);
      // The write takes its snapshot now, then waits for the twin's lock.
      const write = create('behind the registration', twin);
      await waitForLockWait();
      await registering.query('COMMIT');
      const written = await write;
      await announcedOf(written.id);
    } finally {
      await registering.query(`DELETE FROM streamed_twins WHERE twin_id = $1`, [twin.twin.id]).catch(() => undefined);
      await registering.end();
    }
  });

  async function waitForLockWait(): Promise<void> {
    const until = Date.now() + 5000;
    for (;;) {
      const [row] = await app.dataSource.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event = 'advisory' AND datname = current_database()`);
      if (row.n > 0) return;
      if (Date.now() > until) throw new Error('the write never waited for the lock');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('streams opened while the twin is written to miss nothing committed after they opened', async () => {
    const twin = await siblingOf('Busy');
    for (let round = 0; round < 5; round++) {
      let writing = true;
      let opened = false;
      const writers = Array.from({ length: 4 }, async () => {
        const ids: { id: string; startedAfterOpen: boolean }[] = [];
        while (writing) {
          const startedAfterOpen = opened;
          ids.push({ id: (await create(`round ${round}`, twin)).id, startedAfterOpen });
        }
        return ids;
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const stream = await events.stream(twin, readLastEventId(undefined));
      opened = true;
      await new Promise((resolve) => setTimeout(resolve, 60));
      writing = false;
      const written = (await Promise.all(writers)).flat();
      const last = await create(`round ${round} done`, twin);
      const received: string[] = [];
      for (;;) {
        const change = await nextChange(stream);
        received.push(change.position);
        if (change.id === last.id) break;
      }
      await stream.return?.();
      // Every write begun after the stream opened arrived, and what arrived is the log without a gap.
      const receivedIds = new Set((await app.dataSource.query(`SELECT subject_id FROM changes WHERE position = ANY ($1::bigint[])`, [received])).map((r: { subject_id: string }) => r.subject_id));
      for (const { id, startedAfterOpen } of written) if (startedAfterOpen) expect(receivedIds.has(id)).toBe(true);
      const log = (await app.dataSource.query(`SELECT position::text FROM changes WHERE twin_id = $1 AND position >= $2::bigint ORDER BY position`, [twin.twin.id, received[0]])).map((r: { position: string }) => r.position);
      expect(received).toEqual(log);
    }
  });
});
