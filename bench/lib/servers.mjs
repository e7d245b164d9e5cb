// The two servers the benchmarks compare and the requests they are compared on, shared by
// bench/run.mjs (throughput) and bench/cpu-per-request.mjs (CPU time per request).
import { fork, spawn } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { openSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

export const SERVICE_PORT = Number(process.env.BENCH_SERVICE_PORT ?? 3310);
export const RAW_PORT = Number(process.env.BENCH_RAW_PORT ?? 3311);

/**
 * The cursor key both servers sign page cursors with (CURSOR_SECRET), so the deep keyset scenarios can
 * start from a position the bench computed, and both servers' links carry the same cursors.
 */
export const BENCH_CURSOR_SECRET = 'bench-cursor-secret-0123456789abcdef';

/** A page cursor as the service writes it (common/json-api/cursor.ts): signed [scope, position]. */
export function benchCursor(scope, position) {
  const payload = Buffer.from(JSON.stringify([scope, position])).toString('base64url');
  const key = createHash('sha256').update(BENCH_CURSOR_SECRET).digest();
  return `${payload}.${createHmac('sha256', key).update(payload).digest().subarray(0, 16).toString('base64url')}`;
}

/** The NODE_OPTIONS the production image runs with (Dockerfile), so the service is measured as deployed. */
export const SERVICE_NODE_OPTIONS = /^ENV NODE_OPTIONS="([^"]*)"/m.exec(readFileSync(join(root, 'Dockerfile'), 'utf8'))?.[1] ?? '';

/** Refuses to start when a server (say, one left over from an interrupted run) already answers on the port. */
export async function assertPortFree(port) {
  const answered = await fetch(`http://127.0.0.1:${port}/health`).then(() => true, () => false);
  if (answered) throw new Error(`something already answers on port ${port} (a server left over from an earlier run?); stop it first`);
}

/**
 * SIGTERM, then SIGKILL when the server has not exited within `graceMs`: a service draining a queue of
 * slow requests (geo listings at 50 connections) must not outlive the run and answer the next one.
 */
export async function stopServer(child, graceMs = 5000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

export async function waitReady(port, child, name) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode} before it was ready`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/health`);
      if (response.ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${name} did not answer /health within 60 s`);
}

/**
 * A server's standard output: dropped, or written to `file` (PROFILE_STDOUT for the service,
 * PROFILE_RAW_STDOUT for the raw server), where V8's own traces go (bench/gc-trace.mjs).
 */
const stdoutTo = (file) => (file ? openSync(file, 'w') : 'ignore');

export function startService(url, port = SERVICE_PORT) {
  const child = spawn(process.execPath, [join(root, 'dist/src/main.js')], {
    cwd: root,
    env: {
      ...process.env,
      // PROFILE_NODE_OPTIONS (say `--cpu-prof --cpu-prof-dir=/tmp/prof`) looks inside the service only;
      // PROFILE_RAW_NODE_OPTIONS inside the raw server (startRaw); PROFILE_STDOUT keeps what it prints.
      NODE_OPTIONS: `${SERVICE_NODE_OPTIONS} ${process.env.PROFILE_NODE_OPTIONS ?? ''}`,
      NODE_ENV: 'production',
      DATABASE_URL: url,
      PORT: String(port),
      // Its own metrics listener, so that two services (the scaling comparison's two datasets) can run side by side.
      METRICS_PORT: String(port + 10_000),
      HOST: '127.0.0.1',
      RATE_LIMIT_MAX: '0',
      LOG_LEVEL: 'warn',
      CURSOR_SECRET: BENCH_CURSOR_SECRET,
    },
    stdio: ['ignore', stdoutTo(process.env.PROFILE_STDOUT), 'pipe'],
  });
  child.stderr.on('data', (chunk) => process.env.BENCH_VERBOSE && process.stderr.write(chunk));
  return child;
}

export function startRaw(url, port = RAW_PORT) {
  return fork(join(root, 'bench/raw-server.mjs'), [], {
    cwd: root,
    // The same V8 heap bounds as the service: the ratio is about the framework layers, not heap sizing.
    env: { ...process.env, NODE_OPTIONS: `${SERVICE_NODE_OPTIONS} ${process.env.PROFILE_RAW_NODE_OPTIONS ?? ''}`, NODE_ENV: 'production', DATABASE_URL: url, PORT: String(port), CURSOR_SECRET: BENCH_CURSOR_SECRET },
    stdio: ['ignore', stdoutTo(process.env.PROFILE_RAW_STDOUT), 'inherit', 'ipc'],
  });
}

/**
 * A pool of fresh (X-Twin twin, quest) pairs for the embark scenario: embarking twice with the same pair
 * is a 409, so every request takes the next pair. Consecutive pairs differ in quest (so in places) and
 * in twin: many users embarking at once. Each embark holds its twin's change-log lock through its
 * commit (migration ChangeLog), so one twin's embarks commit one at a time; with forty consecutive
 * pairs of one twin (as before), the requests in flight were mostly one twin's and waited in that
 * lock's queue. `restart()` after the embarks were reset (bench/lib/load.mjs resetEmbarks).
 */
function embarkPairs(d, headers) {
  let next = 0;
  const size = d.embarkQuests.length * d.embarkTwins.length;
  return {
    size,
    restart: () => (next = 0),
    next() {
      if (next >= size) throw new Error(`the embark pool of ${size} pairs is used up; make it bigger (bench/lib/load.mjs)`);
      const i = next++;
      // quest = i mod Q; twin = (round + quest) mod T, round = ⌊i / Q⌋: each pair once, and the next
      // request's twin is the next twin.
      const quest = i % d.embarkQuests.length;
      const twin = (Math.floor(i / d.embarkQuests.length) + quest) % d.embarkTwins.length;
      return { path: `/quests/${d.embarkQuests[quest]}/embark`, headers: { ...headers, 'x-twin': d.embarkTwins[twin] } };
    },
  };
}

/**
 * The benchmarked requests on a loaded and prepared dataset `d` (bench/lib/load.mjs), each with its
 * target `kind`. A scenario with `pairs` takes its path and headers from the pool, request by request.
 */
export function scenarios(d) {
  const tenant = { authorization: `Token ${d.token}`, 'x-organization': d.organizationId };
  const asTwin = (twin) => ({ ...tenant, 'x-twin': twin });
  const geo = { ...tenant, accept: 'application/geo+json' };
  const document = { 'content-type': 'application/vnd.api+json' };
  const pairs = embarkPairs(d, tenant);
  return [
    { name: 'twin detail', kind: 'detail', path: `/twins/${d.detailTwin}/`, headers: tenant },
    { name: 'twin detail, 200 connections', kind: 'detail', path: `/twins/${d.connectedTwin}/`, headers: tenant },
    // A client revalidating its copy: 304 without a body, decided from the twin's version alone.
    { name: 'twin detail 304', kind: 'detail', path: `/twins/${d.detailTwin}/`, headers: { ...tenant, 'if-none-match': d.detailEtag }, expectStatus: 304 },
    { name: 'list page 1', kind: 'list', path: '/twins/', headers: tenant },
    { name: 'list page 100', kind: 'list', path: '/twins/?page_number=100', headers: tenant },
    // What compression costs: the same 40 KB page, brotli and gzip (both servers compress it).
    { name: 'list page 1, br', kind: 'list', path: '/twins/', headers: { ...tenant, 'accept-encoding': 'br' } },
    { name: 'list page 1, gzip', kind: 'list', path: '/twins/', headers: { ...tenant, 'accept-encoding': 'gzip' } },
    { name: 'list of a provider org', kind: 'list', path: `/twins/?organization=${d.providerOrg}`, headers: tenant },
    { name: '/my/twins/', kind: 'my', path: '/my/twins/', headers: tenant },
    { name: `geo ~1k (${d.geo1k.count})`, kind: 'geo', path: `/twins/?in_bbox=${d.geo1k.box}&page_size=1000`, headers: geo },
    // A request takes seconds at 50 connections (the service's 30,000-feature budget lets three run at once): measured for at least 12 s.
    { name: `geo ~10k (${d.geo10k.count})`, kind: 'geo', path: `/twins/?in_bbox=${d.geo10k.box}&page_size=10000`, headers: geo, minSeconds: 12 },
    { name: `distance (${d.distCount} within ${d.dist} m)`, kind: 'distance', path: `/twins/?point=${d.point}&dist=${d.dist}&ordering=distance`, headers: tenant },
    {
      name: 'POST /events/',
      kind: 'post',
      path: '/events/',
      method: 'POST',
      headers: { ...asTwin(d.postTwin), ...document },
      body: JSON.stringify({ data: { type: 'events', attributes: { name: 'walk', category: 'activity', data: { steps: 4200, device: 'watch', route: { km: 3.2 } } } } }),
      generated: { '/data/id': 'uuid', '/data/attributes/timestamp': 'timestamp' },
    },
    {
      name: 'PATCH /events/<id>/',
      kind: 'patch',
      path: `/events/${d.patchEvent}/`,
      method: 'PATCH',
      headers: { ...asTwin(d.patchTwin), ...document },
      body: JSON.stringify({ data: { type: 'events', id: d.patchEvent, attributes: { data: { steps: 5000, device: null, route: { km: 4.1 } } } } }),
    },
    { name: 'timeline page', kind: 'timeline', path: '/events/', headers: asTwin(d.timelineTwin) },
    { name: 'quest feed', kind: 'feed', path: '/quests/', headers: asTwin(d.timelineTwin) },
    // Keyset pages: page 1 and page 10,000 of a long timeline and of the visible twins cost the same.
    { name: 'timeline keyset page 1', kind: 'timeline', depth: 'timeline', path: '/events/?page_after=', headers: asTwin(d.longTimelineTwin) },
    {
      name: `timeline keyset page ${d.deep.timeline.page}`,
      kind: 'timeline',
      depth: 'timeline',
      path: `/events/?page_after=${benchCursor('events:-timestamp', d.deep.timeline.position)}`,
      headers: asTwin(d.longTimelineTwin),
    },
    // Newest first, so both pages hold imported places (the oldest visible twins are the tenant's own,
    // smaller ones), and the same few fields: the pair compares what depth costs, not row sizes.
    { name: 'list keyset page 1', kind: 'list', depth: 'twins', path: '/twins/?sort=-created&page_after=&fields[twins]=name,created,modified', headers: tenant },
    {
      name: `list keyset page ${d.deep.twins.page}`,
      kind: 'list',
      depth: 'twins',
      path: `/twins/?sort=-created&page_after=${benchCursor('twins:-created', d.deep.twins.position)}&fields[twins]=name,created,modified`,
      headers: tenant,
    },
    // Sparse fieldsets and compound documents.
    { name: 'list, fields[] + include', kind: 'list', path: '/twins/?fields[twins]=name,location,organization&include=organization', headers: tenant },
    { name: 'quest feed, include=twin', kind: 'feed', path: '/quests/?include=twin&fields[twins]=name,description', headers: asTwin(d.timelineTwin) },
    {
      name: 'embark',
      kind: 'embark',
      method: 'POST',
      path: '/quests/<pool>/embark',
      headers: tenant,
      pairs,
      // Written per request: the copy's id and times.
      generated: { '/data/id': 'uuid', '/data/attributes/created': 'timestamp', '/data/attributes/modified': 'timestamp' },
    },
  ];
}
