// V8's per-collection trace (--trace-gc-nvp: one JSON line per collection, with what was allocated, what
// survived a scavenge and what was promoted to the old generation), and its summary per request.
// Node refuses that flag in NODE_OPTIONS, so a preload sets it. The trace goes to standard output, which
// the bench drops unless told where to write it:
//
//   PROFILE_NODE_OPTIONS="--require ./bench/gc-trace.mjs" PROFILE_STDOUT=/tmp/service-gc.log \
//   PROFILE_RAW_NODE_OPTIONS="--require ./bench/gc-trace.mjs" PROFILE_RAW_STDOUT=/tmp/raw-gc.log \
//   node bench/cpu-per-request.mjs --mode full --only geo --connections 50 --requests 1500
//   node bench/gc-trace.mjs /tmp/service-gc.log /tmp/raw-gc.log --requests 2000
//
// (--requests: all the process served, warm-up included: cpu-per-request's 1500 + 500.)
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';

if (process.argv[1] === fileURLToPath(import.meta.url)) summarize(process.argv.slice(2));
else setFlagsFromString('--trace-gc-nvp');

function summarize(args) {
  const at = args.indexOf('--requests');
  const requests = at === -1 ? 1 : Number(args.splice(at, 2)[1]);
  const kB = (bytes) => Math.round(bytes / requests / 1024);
  for (const file of args) {
    const collections = readFileSync(file, 'utf8')
      .split('\n')
      .map((line) => /GC: (\{.*\})/.exec(line)?.[1])
      .filter(Boolean)
      .map((json) => JSON.parse(json));
    const sum = (kind, field) => collections.filter((c) => kind(c.gc)).reduce((total, c) => total + (c[field] ?? 0), 0);
    const scavenge = (gc) => gc === 's';
    const full = (gc) => gc !== 's';
    console.log(
      `${file}: ${collections.filter((c) => scavenge(c.gc)).length} scavenges, ${collections.filter((c) => full(c.gc)).length} mark-compacts; ` +
        `per request: allocated ${kB(sum(() => true, 'allocated'))} kB, survived a scavenge ${kB(sum(scavenge, 'new_space_survived'))} kB, ` +
        `promoted ${kB(sum(scavenge, 'promoted'))} kB; pauses ${Math.round(sum(scavenge, 'pause'))} ms scavenging, ${Math.round(sum(full, 'pause'))} ms marking and compacting`,
    );
  }
}
