import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { now } from './support/clock';
import { reportFigures, round } from './support/figures';
import { JSON_API, percentile } from './support/load';
import { NginxProcess } from './support/nginx';
import { freePort } from './support/pg-cluster';
import { ServiceProcess } from './support/service-process';
import { FaultStack } from './support/stack';
import { countOutcomes, inPool, not413, oversizedEventDocument, Outcome, postWithCurl, postWithFetch, randomBody, Upload } from './support/uploads';

/**
 * Oversized request bodies: an image over IMAGE_LIMIT_BYTES (5 MiB) and a JSON document over
 * BODY_LIMIT_BYTES (1 MiB), sent whole by clients that do not stop to listen.
 *
 * The service decides the 413 from Content-Length before reading the body. If it then answered and
 * closed the connection while the client was still sending, the client would get EPIPE/ECONNRESET
 * instead of the answer, and nginx in front would answer 502 and mark the replica failed for
 * `fail_timeout` (with every replica marked, ordinary requests get 502 too). So:
 *
 * - sent directly (Node's fetch and curl, with and without `Expect: 100-continue`): every upload gets
 *   the 413 JSON:API errors document (`payload_too_large`), none a reset or a broken pipe;
 * - through a real nginx with two replicas: no 502 among the oversized uploads (all are the service's
 *   413 document), no upstream error in nginx's log, and the ordinary GETs right after are all 200.
 */
const IMAGE_BYTES = 8 * 1024 * 1024;
const JSON_BYTES = 3 * 1024 * 1024;
const DIRECT_IMAGES = 20;
const DIRECT_JSON = 10;
const PROXIED_UPLOADS = 40;
const PROXIED_GETS = 40;
const CONCURRENCY = 4;

describe('faults: oversized request bodies', () => {
  let stack: FaultStack;
  /** A second replica on the same database, so nginx has one to mark failed and one to fall back on. */
  let replica: ServiceProcess | undefined;
  let nginx: NginxProcess | undefined;
  let files: string;
  let image: Upload & { file: string };
  let event: Upload & { file: string };
  let smallImage: Pick<Upload, 'kind' | 'body'> & { file: string };
  let smallEvent: Pick<Upload, 'kind' | 'body'> & { file: string };
  let orgsHeaders: Record<string, string>;

  beforeAll(async () => {
    stack = await FaultStack.start('Oversized');
    replica = await ServiceProcess.start({ port: await freePort(), databaseUrl: stack.databaseUrl });
    const { token, organizationId, twinId } = stack.tenant;
    orgsHeaders = { authorization: `Token ${token}`, 'x-organization': organizationId, accept: JSON_API };
    // curl reads its body from a file; fetch streams the same bytes from memory.
    files = mkdtempSync(join(tmpdir(), 'twin-faults-bodies-'));
    image = { kind: 'image 8 MiB', path: '/images/', headers: { ...orgsHeaders, 'content-type': 'image/png' }, body: randomBody(IMAGE_BYTES), file: join(files, 'image.png') };
    event = {
      kind: 'JSON 3 MiB',
      path: '/events/',
      headers: { ...orgsHeaders, 'x-twin': twinId, 'content-type': JSON_API },
      body: oversizedEventDocument(JSON_BYTES),
      file: join(files, 'event.json'),
    };
    smallImage = { kind: 'small image', body: randomBody(1024), file: join(files, 'small.png') };
    smallEvent = {
      kind: 'small event',
      body: Buffer.from(JSON.stringify({ data: { type: 'events', attributes: { name: 'control', category: 'faults', data: {} } } })),
      file: join(files, 'small.json'),
    };
    for (const upload of [image, event, smallImage, smallEvent]) writeFileSync(upload.file, upload.body);
  });

  afterAll(async () => {
    await nginx?.stop();
    await replica?.stop(5000).catch(() => undefined);
    await stack?.close();
    if (files) rmSync(files, { recursive: true, force: true });
  });

  it('answers every oversized upload sent directly with a 413 errors document, never a reset (fetch, curl)', async () => {
    const base = `http://127.0.0.1:${stack.port}`;
    // Controls: the same requests with small bodies reach the routes (an event is created; random
    // bytes are refused as no image, not as too large, nor as an unknown route).
    const small = await Promise.all([
      postWithFetch(base, { ...event, kind: 'small event', body: smallEvent.body }),
      postWithCurl(base, { ...event, ...smallEvent }, { expectContinue: false }),
      postWithFetch(base, { ...image, kind: 'small image', body: smallImage.body }),
      postWithCurl(base, { ...image, ...smallImage }, { expectContinue: false }),
    ]);
    expect(small.map((o) => `${o.client} ${o.kind} ${o.status}`)).toEqual([
      'fetch small event 201',
      'curl (no Expect) small event 201',
      `fetch small image ${small[2].status}`,
      `curl (no Expect) small image ${small[2].status}`,
    ]);
    expect([404, 405, 413]).not.toContain(small[2].status);
    expect(small[2].status).toBeLessThan(500);

    const started = now();
    const outcomes: Outcome[] = [
      ...(await inPool(DIRECT_IMAGES, CONCURRENCY, () => postWithFetch(base, image))),
      ...(await inPool(DIRECT_IMAGES / 2, CONCURRENCY, () => postWithCurl(base, image, { expectContinue: true }))),
      ...(await inPool(DIRECT_IMAGES / 2, CONCURRENCY, () => postWithCurl(base, image, { expectContinue: false }))),
      ...(await inPool(DIRECT_JSON, CONCURRENCY, () => postWithFetch(base, event))),
      ...(await inPool(DIRECT_JSON / 2, CONCURRENCY, () => postWithCurl(base, event, { expectContinue: true }))),
      ...(await inPool(DIRECT_JSON / 2, CONCURRENCY, () => postWithCurl(base, event, { expectContinue: false }))),
    ];
    const took = now() - started;
    // The service is still serving afterwards.
    const after = await fetch(`${base}/organizations/`, { headers: orgsHeaders, signal: AbortSignal.timeout(10_000) });
    await after.arrayBuffer();

    const latencies = outcomes.map((o) => o.ms);
    reportFigures('oversized bodies, direct', {
      uploads: outcomes.length,
      'sent MiB': round(outcomes.reduce((sum, o) => sum + (o.kind === image.kind ? IMAGE_BYTES : JSON_BYTES), 0) / 2 ** 20),
      'took ms': round(took),
      'latency p50 / p99 / max ms': `${round(percentile(latencies, 50))} / ${round(percentile(latencies, 99))} / ${round(Math.max(...latencies))}`,
      'not a 413 errors document': not413(outcomes).length,
      'GET /organizations/ afterwards': after.status,
      'controls (small bodies)': small.map((o) => `${o.client} ${o.kind} ${o.status}${o.code ? ` ${o.code}` : ''}`).join(', '),
      outcomes: countOutcomes(outcomes),
    });

    expect(not413(outcomes)).toEqual([]);
    expect(after.status).toBe(200);
    expect(stack.service.hasExited).toBe(false);
  });

  it('through nginx: no 502 for oversized uploads, no replica marked failed, ordinary requests 200 right after', async () => {
    nginx = await NginxProcess.start([stack.port, replica!.port]);
    const base = `http://127.0.0.1:${nginx.port}`;
    const started = now();
    // Images and JSON documents (one in five) interleaved, CONCURRENCY at a time, alternating clients.
    const uploads = await inPool(PROXIED_UPLOADS, CONCURRENCY, (i) => {
      const upload = i % 5 === 4 ? event : image;
      return i % 2 === 0 ? postWithFetch(base, upload) : postWithCurl(base, upload, { expectContinue: false });
    });
    const uploadsTook = now() - started;
    const getsStarted = now();
    const gets = await inPool(PROXIED_GETS, CONCURRENCY, async () => {
      const start = now();
      try {
        const response = await fetch(`${base}/organizations/`, { headers: orgsHeaders, signal: AbortSignal.timeout(10_000) });
        await response.arrayBuffer();
        return { status: response.status, ms: now() - start };
      } catch (error) {
        return { status: 0, error: String((error as { cause?: unknown }).cause ?? error), ms: now() - start };
      }
    });
    const getsTook = now() - getsStarted;

    // nginx's own view, read before it stops (stopping removes its folder).
    const access = nginx.accessLog();
    // Every attempt nginx made on an upstream (a retried request lists several, e.g. "502, 413").
    const upstreamAttempts = access.flatMap((line) => line.upstreamStatus.split(/,\s*|\s*:\s*/).filter(Boolean));
    const upstreamErrors = nginx
      .errorLog()
      .split('\n')
      .filter((line) => /upstream|no live/.test(line));
    await nginx.stop();
    const getStatuses: Record<string, number> = {};
    for (const g of gets) getStatuses[String(g.status || g.error)] = (getStatuses[String(g.status || g.error)] ?? 0) + 1;
    const uploadLatencies = uploads.map((o) => o.ms);

    reportFigures('oversized bodies, through nginx', {
      'oversized uploads': uploads.length,
      'uploads took ms': round(uploadsTook),
      'upload latency p50 / max ms': `${round(percentile(uploadLatencies, 50))} / ${round(Math.max(...uploadLatencies))}`,
      '502 among uploads': uploads.filter((o) => o.status === 502).length,
      'not a 413 errors document': not413(uploads).length,
      'upload outcomes': countOutcomes(uploads),
      'GETs right after': gets.length,
      'GETs took ms': round(getsTook),
      'GET statuses': getStatuses,
      'upstream statuses seen by nginx': countBy(upstreamAttempts),
      'requests per replica': countBy(access.map((line) => line.upstreamAddr)),
      'nginx upstream errors logged': upstreamErrors.length,
    });

    expect(uploads.filter((o) => o.status === 502).map((o) => `${o.client} ${o.kind} after ${round(o.ms)} ms`)).toEqual([]);
    expect(not413(uploads)).toEqual([]);
    expect(gets.filter((g) => g.status !== 200)).toEqual([]);
    // The requests went where they were meant to (no path rewritten by a client on the way).
    expect([...new Set(access.map((line) => line.request))].sort()).toEqual([
      '"GET /health HTTP/1.1"',
      '"GET /organizations/ HTTP/1.1"',
      '"POST /events/ HTTP/1.1"',
      '"POST /images/ HTTP/1.1"',
    ]);
    // nginx never saw an upstream fail (a reset, a premature close): no replica was marked failed.
    expect(upstreamErrors).toEqual([]);
    expect(upstreamAttempts.filter((status) => status !== '413' && status !== '200')).toEqual([]);
  });
});

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}
