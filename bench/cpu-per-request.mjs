// CPU time per request of the service and of the raw baseline, the same requests on the same data:
// user + system time of each server process, and of the PostgreSQL backends serving its pool (found by
// application_name), from /proc/<pid>/stat, around a fixed number of requests. Both servers share the
// machine's cores with PostgreSQL, so the total is what decides throughput.
// A complement to `npm run bench`: throughput ratios on a shared 2-core machine move by ±0.1 from run
// to run, CPU per request much less, so this is what to look at when changing per-request code.
// (Garbage collection on V8's helper threads is included, and shown as its own column; time the kernel
// spends on the process's behalf outside it, as under a sandboxing kernel, is not.)
//
//   npm run build && node bench/cpu-per-request.mjs [--mode quick|full] [--requests 6000]
//                                                   [--connections 8] [--only detail,list,my,geo,distance,post,patch,timeline,feed,embark]
//
// Needs the bench database of that mode (`npm run bench [-- --quick]` loads it once).
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, ensureData, prepare, resetEmbarks } from './lib/load.mjs';
import { assertPortFree, RAW_PORT, scenarios, SERVICE_PORT, startRaw, startService, stopServer, waitReady } from './lib/servers.mjs';
import { option } from './lib/args.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const autocannon = require('autocannon');

const mode = option('mode', 'quick');
const requests = Number(option('requests', 6000));
const only = option('only', 'detail,list,timeline,feed').split(/,(?! )/);
const base = (process.env.PGURL_BASE ?? 'postgresql://postgres@127.0.0.1:5432').replace(/\/$/, '');
const CONNECTIONS = Number(option('connections', 8));

const log = (line) => process.stderr.write(`${line}\n`);
const data = await prepare(await ensureData({ base, name: `twin_bench_${mode}`, mode, root, log }), log);
await assertPortFree(SERVICE_PORT);
await assertPortFree(RAW_PORT);
const servers = {
  service: { port: SERVICE_PORT, child: startService(data.url) },
  raw: { port: RAW_PORT, child: startRaw(data.url) },
};
const stop = () => Object.values(servers).forEach((s) => s.child.kill('SIGKILL'));
process.on('exit', stop);
await Promise.all(Object.entries(servers).map(([who, { port, child }]) => waitReady(port, child, who)));

/** The command name and utime + stime in µs (the kernel counts in clock ticks of 10 ms) of a /proc stat file. */
const readStat = (path) => {
  const stat = readFileSync(path, 'utf8');
  // The name is in parentheses and may itself hold ') ', so the fields start after the last one.
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), micros: (Number(fields[11]) + Number(fields[12])) * 10_000 };
};

/** utime + stime of a process, all its threads, in µs. */
const cpuMicros = (pid) => readStat(`/proc/${pid}/stat`).micros;

/**
 * utime + stime of V8's helper threads of a process (named node-V8Worker: concurrent marking and
 * sweeping, parallel scavenges, background compilation), in µs: its garbage collection off the main thread.
 */
const helperMicros = (pid) => {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const thread = readStat(`/proc/${pid}/task/${tid}/stat`);
      if (thread.name.includes('V8Worker')) total += thread.micros;
    } catch {} // a thread that ended meanwhile
  }
  return total;
};

// The bench's own requests, by kind; of several of one kind, the first.
const byKind = {};
for (const scenario of scenarios(data)) byKind[scenario.kind] ??= scenario;
const load = (port, scenario, amount) =>
  new Promise((resolve, reject) =>
    autocannon(
      {
        url: `http://127.0.0.1:${port}${scenario.path}`,
        method: scenario.method ?? 'GET',
        headers: scenario.headers,
        body: scenario.body,
        requests: scenario.pairs ? [{ method: scenario.method, setupRequest: (request) => ({ ...request, ...scenario.pairs.next() }) }] : undefined,
        connections: CONNECTIONS,
        amount,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    ),
  );

/** The PostgreSQL backends of each server's pool (same machine), by the application_name each sets. */
const APPLICATION = { service: 'twin-service', raw: 'twin-bench-raw' };
const admin = await connect(data.url);
const backendMicros = async (who) => {
  const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [APPLICATION[who]]);
  let total = 0;
  for (const { pid } of rows) {
    try {
      total += cpuMicros(pid);
    } catch {} // a backend that ended meanwhile
  }
  return total;
};

console.log(`CPU per request, ${requests} requests at ${CONNECTIONS} connections after ${Math.round(requests / 3)} warm-up, ${mode} data`);
console.log(
  '| scenario | service node µs | of which V8 helpers | service PostgreSQL µs | raw node µs | of which V8 helpers | raw PostgreSQL µs | service / raw (node) | service / raw (total) |\n' +
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
);
for (const name of only) {
  // A kind (its first scenario) or a scenario's exact name ('list page 1, br').
  const scenario = byKind[name] ?? scenarios(data).find((s) => s.name === name);
  if (!scenario) throw new Error(`unknown scenario ${name} (${Object.keys(byKind).join(', ')}, or a scenario's name)`);
  const micros = {};
  for (const [who, { port, child }] of Object.entries(servers)) {
    if (scenario.pairs) {
      // Embarks: each server starts from the same state, with fresh pairs.
      const db = await connect(data.url);
      await resetEmbarks(db, data.embarkQuests);
      await db.end();
      scenario.pairs.restart();
    }
    await load(port, scenario, Math.round(requests / 3));
    const before = cpuMicros(child.pid);
    const helpersBefore = helperMicros(child.pid);
    const databaseBefore = await backendMicros(who);
    const result = await load(port, scenario, requests);
    if (result.non2xx - (scenario.expectStatus === 304 ? result['3xx'] : 0) + result.errors > 0) throw new Error(`${name} on the ${who}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    micros[who] = (cpuMicros(child.pid) - before) / requests;
    micros[`${who}Helpers`] = (helperMicros(child.pid) - helpersBefore) / requests;
    micros[`${who}Database`] = ((await backendMicros(who)) - databaseBefore) / requests;
  }
  const total = (who) => micros[who] + micros[`${who}Database`];
  console.log(
    `| ${name} | ${micros.service.toFixed(0)} | ${micros.serviceHelpers.toFixed(0)} | ${micros.serviceDatabase.toFixed(0)} | ` +
      `${micros.raw.toFixed(0)} | ${micros.rawHelpers.toFixed(0)} | ${micros.rawDatabase.toFixed(0)} | ` +
      `${(micros.service / micros.raw).toFixed(2)} | ${(total('service') / total('raw')).toFixed(2)} |`,
  );
}
await admin.end();
// A clean stop, so a server run with PROFILE_NODE_OPTIONS (--cpu-prof) writes its profile; SIGKILL only on an early exit.
await Promise.all(Object.values(servers).map((s) => stopServer(s.child)));
process.exit(0);
