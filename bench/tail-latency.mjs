// Latency percentiles of one URL under steady keep-alive load from a process of its own (autocannon in
// bench/run.mjs shares its process, and two cores, with the measuring), and when the slowest requests
// started: bunched together means the server paused (a GC, a blocked loop), spread out means queueing.
//
//   node bench/tail-latency.mjs --url http://127.0.0.1:3000/twins/ [--connections 50] [--seconds 12]
//                               [--header "authorization: Token …"] [--header "x-organization: …"]
import http from 'node:http';
import { option } from './lib/args.mjs';

const argv = process.argv.slice(2);
const url = option('url');
if (!url) {
  process.stderr.write('tail-latency: --url is required\n');
  process.exit(2);
}
const connections = Number(option('connections', 50));
const seconds = Number(option('seconds', 12));
// Repeatable, unlike the options args.mjs reads.
const headers = Object.fromEntries(
  argv.flatMap((arg, i) => (arg === '--header' ? [argv[i + 1]] : [])).map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
);

const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
const started = performance.now();
const samples = []; // [start offset ms, latency ms, status]
const once = () =>
  new Promise((resolve, reject) => {
    const at = performance.now();
    http
      .get(url, { agent, headers }, (response) => {
        response.on('data', () => {});
        response.on('end', () => {
          samples.push([at - started, performance.now() - at, response.statusCode]);
          resolve();
        });
      })
      .on('error', reject);
  });
await Promise.all(Array.from({ length: connections }, async () => {
  while (performance.now() - started < seconds * 1000) await once();
}));
agent.destroy();

const latencies = samples.map((s) => s[1]).sort((a, b) => a - b);
const at = (q) => latencies[Math.floor(q * (latencies.length - 1))];
const p99 = at(0.99);
console.log(
  `requests ${samples.length} (${(samples.length / seconds).toFixed(1)}/s), not 200: ${samples.filter((s) => s[2] !== 200).length}; ` +
    `p50 ${at(0.5).toFixed(0)} ms, p90 ${at(0.9).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${at(1).toFixed(0)} ms`,
);
const slowest = samples.filter((s) => s[1] > p99).sort((a, b) => a[0] - b[0]);
console.log(`slowest 1 % started at (s): ${slowest.map((s) => (s[0] / 1000).toFixed(2)).join(' ')}`);
