import { now } from './support/clock';
import { reportFigures, round } from './support/figures';
import { LoadGenerator, percentile, Sample } from './support/load';
import { sleep } from './support/service-process';
import { FaultStack } from './support/stack';

/**
 * Issue 7, faults: PostgreSQL is stopped (`pg_ctl stop -m immediate`) while the service is under
 * mixed load, kept down for a while, then restarted on the same port.
 *
 * - while it is down every request answers within 1 s: 503 with a JSON:API errors document
 *   (`database_unavailable`), /health 503 with `database.status: "down"`; never a 500, never a hang;
 * - after the restart the service recovers by itself (no restart of the service) within 5 s;
 * - every event acknowledged with a 201 is in the database afterwards.
 */
const OUTAGE_MS = Number(process.env.FAULTS_OUTAGE_MS ?? 3000);
const CONCURRENCY = Number(process.env.FAULTS_CONCURRENCY ?? 8);

describe('faults: PostgreSQL outage under load', () => {
  let stack: FaultStack;

  beforeAll(async () => {
    stack = await FaultStack.start('Outage');
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('answers 503 within 1 s while the database is down, recovers within 5 s, loses no acknowledged event', async () => {
    const requests = stack.requests('outage');
    await stack.probeEventWrite(requests.event);
    const mix = [
      { kind: requests.orgs, weight: 4 },
      { kind: requests.health, weight: 1 },
      { kind: requests.event, weight: 4 },
    ];
    const load = new LoadGenerator({ port: stack.port, concurrency: CONCURRENCY, mix, timeoutMs: 10_000, keepSamples: true }).start();
    let stopAt = 0;
    let stoppedAt = 0;
    let restartAt = 0;
    let upAt = 0;
    let healthDuringOutage: Sample | undefined;
    let recoveredAt: number | undefined;
    try {
      await sleep(2000);
      stopAt = now();
      await stack.cluster.stop('immediate');
      stoppedAt = now();
      await sleep(Math.min(500, OUTAGE_MS / 2));
      healthDuringOutage = await load.send(requests.health);
      await sleep(Math.max(0, OUTAGE_MS - (now() - stoppedAt)));
      restartAt = now();
      await stack.cluster.start();
      upAt = now();
      const deadline = upAt + 10_000;
      while (now() < deadline && recoveredAt === undefined) {
        recoveredAt = load.samples.find((s) => s.end >= upAt && s.status >= 200 && s.status < 300 && s.kind !== requests.health.name)?.end;
        await sleep(20);
      }
      await sleep(2000);
    } finally {
      await load.stop();
    }

    const all = load.samples;
    // Requests that were in flight at the stop or started before PostgreSQL accepted connections again.
    const duringOutage = all.filter((s) => s.end >= stopAt && s.start < upAt);
    const outageLatencies = duringOutage.map((s) => s.end - s.start);
    const unavailable = all.filter((s) => s.status === 503 && s.kind !== requests.health.name);
    const badUnavailable = unavailable.filter((s) => !s.errorsDocument || s.errorCode !== 'database_unavailable');
    const serverErrors = all.filter((s) => s.status >= 500 && s.status !== 503);
    const noResponse = all.filter((s) => s.status === 0);
    const healthSamples = duringOutage.filter((s) => s.kind === requests.health.name && s.start >= stoppedAt);
    const acknowledged = [...new Set(load.acknowledgedEvents)];
    const stored = await stack.storedEvents(acknowledged);
    const eventAttempts = all.filter((s) => s.kind === requests.event.name);

    const figures = {
      requests: all.length,
      'requests during outage': duringOutage.length,
      '503 during outage': duringOutage.filter((s) => s.status === 503).length,
      'outage max latency ms': round(Math.max(0, ...outageLatencies)),
      'outage p99 latency ms': round(percentile(outageLatencies, 99)),
      'health during outage': `${healthDuringOutage?.status} database.status=${healthDuringOutage?.databaseStatus}`,
      'pg stop (immediate) took ms': round(stoppedAt - stopAt),
      'pg restart (pg_ctl start -w) took ms': round(upAt - restartAt),
      'recovery ms (pg accepting -> first 2xx)': recoveredAt === undefined ? 'never' : round(Math.max(0, recoveredAt - upAt)),
      'recovery ms (pg start issued -> first 2xx)': recoveredAt === undefined ? 'never' : round(recoveredAt - restartAt),
      '5xx other than 503': serverErrors.length,
      '503 without errors document': badUnavailable.length,
      'no response (hang/reset)': noResponse.length,
      'event POSTs': eventAttempts.length,
      'events acknowledged (201)': acknowledged.length,
      'events stored of acknowledged': stored,
      statuses: load.summary.statuses(),
    };
    reportFigures('outage', figures);

    expect(duringOutage.filter((s) => s.status === 503).length).toBeGreaterThan(0);
    expect(noResponse.map((s) => `${s.kind} ${s.error}`)).toEqual([]);
    expect(serverErrors.map((s) => `${s.kind} ${s.status}`)).toEqual([]);
    expect(badUnavailable.map((s) => `${s.kind} ${s.errorCode}`)).toEqual([]);
    expect(Math.max(0, ...outageLatencies)).toBeLessThan(1000);
    expect(healthDuringOutage?.status).toBe(503);
    expect(healthDuringOutage?.databaseStatus).toBe('down');
    for (const health of healthSamples.filter((s) => s.end < restartAt)) {
      expect(`${health.status} ${health.databaseStatus}`).toBe('503 down');
    }
    expect(recoveredAt).toBeDefined();
    expect(recoveredAt! - upAt).toBeLessThan(5000);
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(stored).toBe(acknowledged.length);
  });
});
