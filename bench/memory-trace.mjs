// Where a server's resident memory is, sampled while it runs: RSS (anonymous and file-backed), V8's heap
// spaces (committed and used), and external memory (Buffers), every MEMORY_TRACE_MS (200) into
// <MEMORY_TRACE_DIR>/memory-<PORT>.tsv. As a preload of both servers, under any bench command:
//
//   PROFILE_NODE_OPTIONS="--require ./bench/memory-trace.mjs" PROFILE_RAW_NODE_OPTIONS="--require ./bench/memory-trace.mjs" \
//   MEMORY_TRACE_DIR=/tmp/memory node bench/run.mjs --no-build --only "list of a provider org,geo,distance"
//   node bench/memory-trace.mjs /tmp/memory/memory-3310.tsv /tmp/memory/memory-3311.tsv
//
// `--require`, not `--import`: with `--import` Node loads the service's CommonJS entry through its ES module
// loader, which keeps two more copies of the bundle's source (~10 MB outside the heap) for the process's life.
//
// The summary is each file's sample of highest RSS, split: file-backed, V8 heap by space, external,
// and the rest of the anonymous memory (malloc: freed memory glibc keeps, compiler zones, thread stacks).
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getHeapSpaceStatistics } from 'node:v8';

const SPACES = ['new_space', 'old_space', 'code_space', 'trusted_space', 'large_object_space', 'new_large_object_space'];
const mb = (bytes) => Math.round(bytes / 104857.6) / 10;

if (process.argv[1] === fileURLToPath(import.meta.url)) summarize(process.argv.slice(2));
else trace();

function trace() {
  const dir = process.env.MEMORY_TRACE_DIR ?? '/tmp';
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `memory-${process.env.PORT ?? process.pid}.tsv`);
  writeFileSync(file, `${['time', 'rss', 'anon', 'file', 'external', 'arrayBuffers', ...SPACES.flatMap((s) => [`${s}`, `${s}.used`])].join('\t')}\n`);
  setInterval(() => {
    const status = readFileSync('/proc/self/status', 'utf8');
    const kB = (key) => Math.round(Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 102.4) / 10;
    const { external, arrayBuffers } = process.memoryUsage();
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s]));
    const row = [Date.now(), kB('VmRSS'), kB('RssAnon'), kB('RssFile'), mb(external), mb(arrayBuffers), ...SPACES.flatMap((s) => [mb(spaces[s]?.space_size ?? 0), mb(spaces[s]?.space_used_size ?? 0)])];
    appendFileSync(file, `${row.join('\t')}\n`);
  }, Number(process.env.MEMORY_TRACE_MS ?? 200)).unref();
}

function summarize(files) {
  for (const file of files) {
    const [header, ...lines] = readFileSync(file, 'utf8').trim().split('\n').map((line) => line.split('\t'));
    const rows = lines.map((line) => Object.fromEntries(header.map((key, i) => [key, Number(line[i])])));
    const peak = rows.reduce((a, b) => (b.rss > a.rss ? b : a));
    const heap = SPACES.reduce((sum, s) => sum + peak[s], 0);
    const spaces = SPACES.filter((s) => peak[s] >= 0.5).map((s) => `${s.replace('_space', '')} ${peak[s]} (${peak[`${s}.used`]} used)`);
    console.log(
      `${file}: peak RSS ${peak.rss} MB = file ${peak.file} + V8 heap ${heap.toFixed(1)} [${spaces.join(', ')}]` +
        ` + external ${peak.external} + other anonymous ${(peak.anon - heap - peak.external).toFixed(1)} (${rows.length} samples)`,
    );
  }
}
