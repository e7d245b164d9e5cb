import { now } from './support/clock';
import { reportFigures, round } from './support/figures';
import { LoadGenerator, percentile } from './support/load';
import { sleep } from './support/service-process';
import { FaultStack } from './support/stack';

/**
 * Decisions, "Bounded waits": PostgreSQL frozen (SIGSTOP of the postmaster and every backend:
 * connections stay open, new ones are accepted by the kernel and never greeted) under a steady
 * 100 `POST /events/` a second, with the default statement timeout (15 s), then thawed (SIGCONT).
 *
 * - every request is answered within the statement timeout + 2 s (in fact within the stall bound of
 *   the liveness watch, src/database/liveness.ts: ~2 s without an answer, then a ~1 s probe);
 * - once the freeze is noticed, new requests are refused at once: 503 `database_unavailable` (or
 *   `database_busy` while waiting for a pooled connection), always a JSON:API errors document;
 * - nothing acknowledged (201) is lost, and the service recovers by itself within 5 s of the thaw.
 */
const FREEZE_MS = Number(process.env.FAULTS_FREEZE_MS ?? 20_000);
const RATE = Number(process.env.FAULTS_FROZEN_RATE ?? 100);
const STATEMENT_TIMEOUT_MS = 15_000;
/** How soon after the freeze new requests must be refused at once: the watch's stall bound, its probe, slack for a loaded machine. */
const NOTICED_WITHIN_MS = 6_000;

describe('faults: PostgreSQL frozen under load', () => {
  let stack: FaultStack;

  beforeAll(async () => {
    stack = await FaultStack.start('Frozen', { DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) });
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('answers every request within the statement timeout + 2 s, refuses at once once noticed, loses nothing, recovers by itself', async () => {
    const requests = stack.requests('frozen');
    await stack.probeEventWrite(requests.event);
    // Open loop: enough workers that requests held by the frozen database do not lower the rate.
    const load = new LoadGenerator({ port: stack.port, concurrency: 300, rate: RATE, mix: [{ kind: requests.event, weight: 1 }], timeoutMs: 60_000, keepSamples: true }).start();
    let frozenAt = 0;
    let thawedAt = 0;
    let recoveredAt: number | undefined;
    let stopped = 0;
    try {
      await sleep(3000);
      frozenAt = now();
      stopped = stack.cluster.freeze().length;
      await sleep(FREEZE_MS);
      thawedAt = now();
      stack.cluster.thaw();
      const deadline = thawedAt + 15_000;
      while (now() < deadline && recoveredAt === undefined) {
        recoveredAt = load.samples.find((s) => s.start >= thawedAt && s.status === 201)?.end;
        await sleep(50);
      }
      await sleep(2000);
    } finally {
      await load.stop();
      stack.cluster.thaw();
    }

    const all = load.samples;
    const latencies = all.map((s) => s.end - s.start);
    const touched = all.filter((s) => s.end >= frozenAt && s.start < thawedAt);
    const afterNoticed = all.filter((s) => s.start >= frozenAt + NOTICED_WITHIN_MS && s.start < thawedAt);
    const afterNoticedLatencies = afterNoticed.map((s) => s.end - s.start);
    const refusals = all.filter((s) => s.status === 503);
    const badRefusals = refusals.filter((s) => !s.errorsDocument || !['database_unavailable', 'database_busy'].includes(s.errorCode ?? ''));
    const otherFailures = all.filter((s) => s.status !== 201 && s.status !== 503);
    const acknowledged = [...new Set(load.acknowledgedEvents)];
    const stored = await stack.storedEvents(acknowledged);
    const storedInAll = await stack.eventsOfTwin();
    const codes = (list: typeof all) => list.reduce<Record<string, number>>((c, s) => ({ ...c, [s.errorCode ?? String(s.status)]: (c[s.errorCode ?? String(s.status)] ?? 0) + 1 }), {});

    reportFigures('database frozen', {
      'postgres processes stopped': stopped,
      'freeze ms': FREEZE_MS,
      'rate (POST /events/ per s)': RATE,
      requests: all.length,
      'requests touching the freeze': touched.length,
      'max latency ms (all)': round(Math.max(0, ...latencies)),
      'p99 latency ms (touching the freeze)': round(percentile(touched.map((s) => s.end - s.start), 99)),
      'answered later than statement timeout + 2 s': latencies.filter((ms) => ms > STATEMENT_TIMEOUT_MS + 2000).length,
      [`p99 / max latency ms (started ${NOTICED_WITHIN_MS / 1000} s into the freeze)`]: `${round(percentile(afterNoticedLatencies, 99))} / ${round(Math.max(0, ...afterNoticedLatencies))}`,
      '503 codes': codes(refusals),
      'other failures': codes(otherFailures),
      'recovery ms (thaw -> first 201)': recoveredAt === undefined ? 'never' : round(recoveredAt - thawedAt),
      'events acknowledged (201)': acknowledged.length,
      'events stored of acknowledged': stored,
      'events stored without a 201 (the statement reached PostgreSQL before it froze)': storedInAll - acknowledged.length - stack.probeEvents.length,
    });

    expect(touched.length).toBeGreaterThan(RATE);
    expect(latencies.filter((ms) => ms > STATEMENT_TIMEOUT_MS + 2000)).toEqual([]);
    expect(afterNoticed.length).toBeGreaterThan(0);
    expect(percentile(afterNoticedLatencies, 99)).toBeLessThan(1000);
    expect(refusals.length).toBeGreaterThan(0);
    expect(badRefusals.map((s) => `${s.status} ${s.errorCode}`)).toEqual([]);
    expect(otherFailures.map((s) => `${s.status} ${s.error ?? s.errorCode}`)).toEqual([]);
    expect(recoveredAt).toBeDefined();
    expect(recoveredAt! - thawedAt).toBeLessThan(5000);
    expect(stored).toBe(acknowledged.length);
  });
});
