import { now } from './support/clock';
import { reportFigures, round } from './support/figures';
import { LoadGenerator, Sample } from './support/load';
import { sleep } from './support/service-process';
import { FaultStack } from './support/stack';

/**
 * Issue 7, faults: SIGTERM while requests (event writes included) are in flight.
 *
 * - every request sent before the signal gets its normal answer (2xx): in-flight work finishes;
 * - requests after it are refused cleanly: a 503 errors document or a refused connection, never a hang
 *   or a 500. A connection reset is tolerated only on a fresh connection (one the listener was closing
 *   under: accept backlog); never on a kept-alive connection, where the drain answers 503 first;
 * - nothing is written without being acknowledged: the twin's events are exactly the 201s;
 * - the process exits by itself within 10 s, with exit code 0;
 * - every event acknowledged with a 201 is in the database.
 */
const CONCURRENCY = Number(process.env.FAULTS_CONCURRENCY ?? 8);
/** Clean refusals of a request sent after SIGTERM. */
const REFUSALS = new Set(['ECONNREFUSED']);

describe('faults: SIGTERM under load', () => {
  let stack: FaultStack;

  beforeAll(async () => {
    stack = await FaultStack.start('Shutdown');
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('finishes in-flight requests, refuses new ones cleanly, exits 0 within 10 s, keeps every acknowledged event', async () => {
    const requests = stack.requests('shutdown');
    await stack.probeEventWrite(requests.event);
    const mix = [
      { kind: requests.orgs, weight: 3 },
      { kind: requests.health, weight: 1 },
      { kind: requests.event, weight: 5 },
    ];
    const load = new LoadGenerator({ port: stack.port, concurrency: CONCURRENCY, mix, timeoutMs: 15_000, keepSamples: true }).start();
    let termAt = 0;
    let exit;
    try {
      await sleep(2000);
      termAt = now();
      await stack.service.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 15_000)));
      exit = await Promise.race([stack.service.exited, timeout]);
      clearTimeout(timer);
      // Keep knocking for a moment after the exit: those must be refused connections.
      await sleep(500);
    } finally {
      await load.stop();
    }

    const all = load.samples;
    const inFlight = all.filter((s) => s.start < termAt && s.end >= termAt);
    const before = all.filter((s) => s.start < termAt);
    const after = all.filter((s) => s.start >= termAt);
    const failedBefore = before.filter((s) => s.status < 200 || s.status >= 300);
    // A 503 is clean when it is the service's own errors document (/health has its own body).
    const isCleanRefusal = (s: Sample) =>
      (s.status === 503 && (s.kind === requests.health.name || s.errorsDocument === true)) ||
      (s.status === 0 && REFUSALS.has(s.error ?? '')) ||
      (s.status === 0 && s.error === 'ECONNRESET' && !s.reusedSocket);
    const answeredAfter = after.filter((s) => s.status >= 200 && s.status < 300);
    const uncleanAfter = after.filter((s) => !isCleanRefusal(s) && !(s.status >= 200 && s.status < 300));
    const acknowledged = [...new Set(load.acknowledgedEvents)];
    const stored = await stack.storedEvents(acknowledged);
    const ofTwin = await stack.eventsOfTwin();

    reportFigures('shutdown', {
      requests: all.length,
      'in flight at SIGTERM': inFlight.length,
      'in-flight max latency ms': round(Math.max(0, ...inFlight.map((s) => s.end - s.start))),
      'sent before SIGTERM, not 2xx': failedBefore.length,
      'sent after SIGTERM: 2xx': answeredAfter.length,
      'sent after SIGTERM: 503': after.filter((s) => s.status === 503).length,
      'sent after SIGTERM: refused connection': after.filter((s) => s.error === 'ECONNREFUSED').length,
      'sent after SIGTERM: reset, fresh connection': after.filter((s) => s.error === 'ECONNRESET' && !s.reusedSocket).length,
      'sent after SIGTERM: reset, kept-alive connection': after.filter((s) => s.error === 'ECONNRESET' && s.reusedSocket).length,
      'sent after SIGTERM: 503 not JSON:API': after.filter((s) => s.status === 503 && s.kind !== requests.health.name && !s.errorsDocument).length,
      'sent after SIGTERM: unclean': uncleanAfter.length,
      'shutdown ms (SIGTERM -> exit)': exit ? round(exit.at - termAt) : 'did not exit within 15 s',
      'exit code': exit ? `${exit.code}${exit.signal ? ` (signal ${exit.signal})` : ''}` : 'running',
      'events acknowledged (201)': acknowledged.length,
      'events stored of acknowledged': stored,
      'events stored in all (incl. probe)': ofTwin,
      statuses: load.summary.statuses(),
    });

    expect(inFlight.length).toBeGreaterThan(0);
    expect(failedBefore.map((s) => `${s.kind} ${s.status || s.error}`)).toEqual([]);
    expect(uncleanAfter.map((s) => `${s.kind} ${s.status || s.error}${s.errorsDocument === false ? ' (not an errors document)' : ''}${s.reusedSocket ? ' (reused socket)' : ''}`)).toEqual([]);
    expect(exit).toBeDefined();
    expect(exit!.at - termAt).toBeLessThan(10_000);
    expect({ code: exit!.code, signal: exit!.signal }).toEqual({ code: 0, signal: null });
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(stored).toBe(acknowledged.length);
    expect(ofTwin).toBe(acknowledged.length + stack.probeEvents.length);
    if (stack.service.logs.trim()) process.stdout.write(`service output:\n${stack.service.logs.slice(-4000)}\n`);
  });
});
