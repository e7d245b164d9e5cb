// A preload that records, per request, when its socket was accepted, when its request was parsed and when
// its answer finished, plus garbage-collection pauses and event-loop stalls, through Node's diagnostics
// channels and perf_hooks (nothing patched). For telling on which side of the socket a slow request
// spent its time, beside a client's own timings of the same run (docs/PERFORMANCE.md, "Running the
// benchmarks").
//
//   PROFILE_NODE_OPTIONS="--require ./bench/request-trace.mjs" TRACE_FILE=/tmp/service-trace.log node bench/…
//
// Lines, times in epoch milliseconds (performance.timeOrigin + now, comparable across processes):
//   R <socket> <request on socket> <accepted> <parsed> <finished>
//   G <start> <pause ms> <kind: 1 scavenge, 4 mark-compact, 8 incremental marking, 16 weak callbacks>
//   S <last tick> <stall ms beyond the 10 ms timer>
import channels from 'node:diagnostics_channel';
import { appendFile } from 'node:fs';
import { performance, PerformanceObserver } from 'node:perf_hooks';

const file = process.env.TRACE_FILE || `request-trace-${process.pid}.log`;
const now = () => performance.timeOrigin + performance.now();
let lines = [];
const sockets = new WeakMap();
const requests = new WeakMap();
let socketCount = 0;

channels.subscribe('net.server.socket', ({ socket }) => sockets.set(socket, { id: ++socketCount, accepted: now(), served: 0 }));
channels.subscribe('http.server.request.start', ({ request, socket }) => requests.set(request, { parsed: now(), socket: sockets.get(socket) }));
channels.subscribe('http.server.response.finish', ({ request }) => {
  const seen = requests.get(request);
  if (!seen) return;
  const socket = seen.socket ?? { id: -1, accepted: 0, served: 0 };
  socket.served++;
  lines.push(`R ${socket.id} ${socket.served} ${socket.accepted.toFixed(2)} ${seen.parsed.toFixed(2)} ${now().toFixed(2)}`);
});
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) lines.push(`G ${(performance.timeOrigin + entry.startTime).toFixed(2)} ${entry.duration.toFixed(2)} ${entry.detail?.kind}`);
}).observe({ entryTypes: ['gc'] });

let lastTick = now();
setInterval(() => {
  const tick = now();
  if (tick - lastTick > 30) lines.push(`S ${lastTick.toFixed(2)} ${(tick - lastTick - 10).toFixed(1)}`);
  lastTick = tick;
}, 10).unref();
setInterval(() => {
  if (lines.length === 0) return;
  const text = `${lines.join('\n')}\n`;
  lines = [];
  appendFile(file, text, () => {});
}, 500).unref();
