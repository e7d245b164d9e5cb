// The load of bench/fleet.mjs: devices as HTTP clients (node:http, a keep-alive socket each), closed
// loops (each device sends its next request when its answer came) and an open loop (requests sent on a
// fixed schedule whatever the answers: latency is measured from when a request was due, so a slow
// server cannot hide its queue by slowing the client down), and the machine's CPU time split between
// the server, PostgreSQL, this process and everything else (from /proc).
import http from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

/** A device's connection to a server: `send(method, path, headers, body)` resolves with status, body text (unless `discard`), ms. */
export function device(port, { discard = false, timeoutMs = 30_000 } = {}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1, maxFreeSockets: 1 });
  const send = (method, path, headers, body, from = performance.now()) =>
    new Promise((resolve) => {
      const request = http.request({ host: '127.0.0.1', port, method, path, agent, headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) } }, (response) => {
        const chunks = [];
        let bytes = 0;
        response.on('data', (chunk) => {
          bytes += chunk.length;
          if (!discard || response.statusCode >= 300) chunks.push(chunk);
        });
        response.on('end', () => resolve({ status: response.statusCode, bytes, text: chunks.length ? Buffer.concat(chunks).toString('utf8') : '', headers: response.headers, ms: performance.now() - from }));
        response.on('error', (error) => resolve({ status: 0, error: error.code ?? error.message, ms: performance.now() - from }));
      });
      request.setTimeout(timeoutMs, () => request.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
      request.on('error', (error) => resolve({ status: 0, error: error.code ?? error.message, ms: performance.now() - from }));
      request.end(body);
    });
  return { send, close: () => agent.destroy() };
}

export const quantile = (sorted, q) => (sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]);
const r1 = (v) => (v === null || v === undefined ? null : Math.round(v * 10) / 10);

/** p50 / p99 / max of latencies (ms). */
export function latencySummary(ms) {
  const sorted = Float64Array.from(ms).sort();
  return { p50: r1(quantile(sorted, 0.5)), p99: r1(quantile(sorted, 0.99)), max: r1(sorted.length ? sorted[sorted.length - 1] : null) };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Closed loops: each of `devices` sends `next(device index)` ({method, path, headers, body}) as soon as
 * its previous answer came, for `warmup` + `seconds`. What counts is what completed within the measured
 * window (after the warm-up): answers, their latency, and `ok(answer, request)` (errors otherwise).
 * `measured` is called when the window opens and closes (for the CPU split).
 */
export async function closedLoop({ port, devices, next, ok, warmup, seconds, discard = false, onWindow = () => {} }) {
  const clients = Array.from({ length: devices }, () => device(port, { discard }));
  const started = performance.now();
  const opens = started + warmup * 1000;
  const closes = opens + seconds * 1000;
  const latencies = [];
  let answers = 0;
  let errors = 0;
  let units = 0;
  const errorKinds = new Map();
  let windowOpened = false;
  const opener = setTimeout(() => {
    windowOpened = true;
    onWindow('open');
  }, warmup * 1000);
  const loop = async (i) => {
    while (performance.now() < closes) {
      const request = next(i);
      const from = performance.now();
      const answer = await clients[i].send(request.method ?? 'GET', request.path, request.headers, request.body, from);
      const end = performance.now();
      if (end < opens || end > closes) continue;
      answers++;
      latencies.push(answer.ms);
      const units1 = ok(answer, request);
      if (units1 === false) {
        errors++;
        const kind = answer.error ?? `${answer.status} ${answer.text?.slice(0, 160)}`;
        errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
      } else {
        units += typeof units1 === 'number' ? units1 : 1;
      }
    }
  };
  const closer = sleep((closes - started) + 1).then(() => onWindow('close'));
  await Promise.all([...clients.map((_, i) => loop(i)), closer]);
  clearTimeout(opener);
  if (!windowOpened) onWindow('open');
  for (const c of clients) c.close();
  return { seconds, answers, perSecond: r1(answers / seconds), units, unitsPerSecond: r1(units / seconds), errors, errorKinds: Object.fromEntries(errorKinds), ...latencySummary(latencies) };
}

/**
 * An open loop: `devices` each sending one request every `periodMs`, evenly staggered (the whole fleet
 * sends devices / period requests a second, on schedule), for `warmup` + `seconds`. A device's next
 * request waits for its connection when the previous answer has not come (a device has one socket), and
 * its latency counts from when it was due. Counted: requests due within the window, and their answers.
 */
export async function openLoop({ port, devices, periodMs, next, ok, warmup, seconds, onWindow = () => {}, drainMs = 30_000 }) {
  const clients = Array.from({ length: devices }, () => device(port));
  const intervalMs = periodMs / devices;
  const t0 = performance.now() + 50;
  const opens = t0 + warmup * 1000;
  const closes = opens + seconds * 1000;
  const latencies = [];
  let due = 0;
  let answers = 0;
  let errors = 0;
  let late = 0;
  const errorKinds = new Map();
  const pending = new Set();
  let k = 0;
  let windowOpened = false;
  while (true) {
    const at = t0 + k * intervalMs;
    if (at >= closes) break;
    const now = performance.now();
    if (at > now) {
      await sleep(Math.max(0, Math.min(at - now, 20) - 0.5));
      continue;
    }
    if (!windowOpened && at >= opens) {
      windowOpened = true;
      onWindow('open');
    }
    const i = k % devices;
    k++;
    const inWindow = at >= opens;
    if (now - at > 5) late++;
    const request = next(i);
    const promise = clients[i].send(request.method ?? 'POST', request.path, request.headers, request.body, at).then((answer) => {
      pending.delete(promise);
      if (!inWindow) return;
      answers++;
      latencies.push(answer.ms);
      if (ok(answer, request) === false) {
        errors++;
        const kind = answer.error ?? `${answer.status} ${answer.text?.slice(0, 160)}`;
        errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
      }
    });
    pending.add(promise);
    if (inWindow) due++;
  }
  onWindow('close');
  const drainUntil = performance.now() + drainMs;
  while (pending.size > 0 && performance.now() < drainUntil) await Promise.race([...pending, sleep(100)]);
  const unanswered = pending.size;
  for (const c of clients) c.close();
  const s = latencySummary(latencies);
  return {
    seconds,
    devices,
    targetPerSecond: r1((devices * 1000) / periodMs),
    due,
    answers,
    achievedPerSecond: r1((answers - errors) / seconds),
    errors: errors + unanswered,
    unanswered,
    errorKinds: Object.fromEntries(errorKinds),
    // Requests the client itself sent more than 5 ms after they were due (a busy client, not the server).
    sentLate: late,
    ...s,
  };
}

// ---------------------------------------------------------------------------------------------------
// CPU time, from /proc (Linux): clock ticks

const TICK = 100;

/** A process's user + system ticks; with `children`, also those of its children that ended and were waited for. */
function procTicks(pid, children = false) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]) + (children ? Number(fields[13]) + Number(fields[14]) : 0);
  } catch {
    return 0;
  }
}

/** The postmaster's pid: the PostgreSQL process whose parent is not one (undefined when none is seen). */
function postmaster(ticks) {
  for (const pid of ticks.keys()) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
      if (!ticks.has(ppid)) return pid;
    } catch {}
  }
  return undefined;
}

/** Every PostgreSQL process (postmaster, backends, background workers): its CPU ticks by pid. */
function postgresTicks() {
  const ticks = new Map();
  for (const name of readdirSync('/proc')) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    try {
      const comm = readFileSync(`/proc/${name}/comm`, 'utf8');
      if (comm.startsWith('postgres')) ticks.set(name, procTicks(name));
    } catch {}
  }
  ticks.master = postmaster(ticks);
  ticks.masterAll = ticks.master ? procTicks(ticks.master, true) : 0;
  return ticks;
}

/**
 * The ticks PostgreSQL's processes used between two readings: the live ones' (a process that started
 * meanwhile, in full), and those of backends that ended meanwhile, which the postmaster's children's
 * time holds once it has waited for them (a connection opened and closed within a measurement).
 */
function postgresDelta(before, after) {
  let sum = 0;
  for (const [pid, ticks] of after) if (pid !== after.master) sum += Math.max(0, ticks - (before.get(pid) ?? 0));
  if (after.master && after.master === before.master) {
    sum += Math.max(0, after.masterAll - before.masterAll);
    // A backend that ended adds its whole life to the postmaster's children: what it had used before is not this measurement's.
    for (const [pid, ticks] of before) if (pid !== before.master && !after.has(pid)) sum -= ticks;
  }
  return Math.max(0, sum);
}

function machineTicks() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { total, idle: f[3] + (f[4] ?? 0), steal: f[7] ?? 0 };
}

/**
 * Starts a CPU split; `stop()` gives CPU-seconds per second of each part (the server, a process beside
 * it, PostgreSQL, this client, the rest), and the machine's busy and steal shares.
 */
export function cpuSplit(serverPid, besidePid) {
  const start = { at: performance.now(), machine: machineTicks(), server: procTicks(serverPid, true), beside: besidePid ? procTicks(besidePid, true) : 0, pg: postgresTicks(), self: process.cpuUsage(), load: loadavg() };
  return () => {
    const seconds = (performance.now() - start.at) / 1000;
    const m = machineTicks();
    const n = cpus().length;
    const total = m.total - start.machine.total;
    const busyCores = total > 0 ? ((total - (m.idle - start.machine.idle) - (m.steal - start.machine.steal)) / total) * n : 0;
    const server = (procTicks(serverPid, true) - start.server) / TICK / seconds;
    const side = besidePid ? (procTicks(besidePid, true) - start.beside) / TICK / seconds : 0;
    const pg = postgresDelta(start.pg, postgresTicks()) / TICK / seconds;
    const selfUsage = process.cpuUsage(start.self);
    const client = (selfUsage.user + selfUsage.system) / 1e6 / seconds;
    const round = (v) => Math.round(v * 100) / 100;
    return {
      seconds: round(seconds),
      busyCores: round(busyCores),
      stealPct: total > 0 ? round(((m.steal - start.machine.steal) / total) * 100) : null,
      serverCores: round(server),
      ...(besidePid ? { besideCores: round(side) } : {}),
      postgresCores: round(pg),
      clientCores: round(client),
      otherCores: round(Math.max(0, busyCores - server - side - pg - client)),
      loadBefore: start.load.map(round),
      loadAfter: loadavg().map(round),
    };
  };
}

/**
 * Waits until the machine is quiet: over `windowS`-second windows, the CPU time of processes other
 * than this one stays under `maxCores` twice in a row. Gives up after `maxWaitS` (and says so). Returns
 * what it saw: the wait, the last window's busy cores, load averages, and the busiest other processes.
 */
export async function waitMachineQuiet({ maxCores = 0.25, windowS = 5, maxWaitS = 1800, log = () => {} } = {}) {
  const started = Date.now();
  let calm = 0;
  let last;
  let said = 0;
  for (;;) {
    const before = processTicks();
    const m0 = machineTicks();
    const self0 = process.cpuUsage();
    await sleep(windowS * 1000);
    const m1 = machineTicks();
    const after = processTicks();
    const selfUsage = process.cpuUsage(self0);
    const total = m1.total - m0.total;
    const busy = total > 0 ? ((total - (m1.idle - m0.idle) - (m1.steal - m0.steal)) / total) * cpus().length - (selfUsage.user + selfUsage.system) / 1e6 / windowS : 0;
    const top = [...after.entries()]
      .map(([pid, p]) => ({ pid, command: p.command, cores: Math.round(((p.ticks - (before.get(pid)?.ticks ?? p.ticks)) / TICK / windowS) * 100) / 100 }))
      .filter((p) => p.cores >= 0.05 && Number(p.pid) !== process.pid)
      .sort((a, b) => b.cores - a.cores)
      .slice(0, 5);
    last = { busyCores: Math.round(busy * 100) / 100, load: loadavg().map((l) => Math.round(l * 100) / 100), top };
    calm = busy < maxCores ? calm + 1 : 0;
    const waited = (Date.now() - started) / 1000;
    if (calm >= 2) return { quiet: true, waitedS: Math.round(waited), ...last };
    if (waited > maxWaitS) return { quiet: false, waitedS: Math.round(waited), ...last };
    if (waited - said >= 60) {
      said = waited;
      log(`fleet: waiting for a quiet machine (${Math.round(waited)} s): others use ${last.busyCores} cores, load ${last.load.join(' ')}; ${top.map((p) => `${p.command} ${p.cores}`).join(', ')}`);
    }
  }
}

function processTicks() {
  const all = new Map();
  for (const name of readdirSync('/proc')) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean).slice(0, 3).join(' ').slice(0, 100);
      all.set(name, { ticks: procTicks(name), command: cmd || readFileSync(`/proc/${name}/comm`, 'utf8').trim() });
    } catch {}
  }
  return all;
}
