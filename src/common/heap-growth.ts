import { setFlagsFromString } from 'node:v8';

/**
 * Sets how far V8 lets the heap grow past what was live after a full collection before it starts the
 * next one (HEAP_GROWING_PERCENT, default 50). V8's own factors rise with the heap's cap: under the
 * Docker image's 1,024 MB, 1.6 for the heap and 4 for the heap and external memory (Buffers) together,
 * so the answers' Buffers that only a full collection frees pile up for long, and the service, which
 * keeps ~15 MB more live than a hand-written server (the framework's code and metadata), is let grow
 * further still. One factor of 1.5 for both brought the peak RSS under load ~10 MB down for ~25 %
 * more Node CPU on 350 kB pages at 8 connections; 1.2 saved ~10 MB more for twice the CPU (docs/PERFORMANCE.md, Memory).
 *
 * A V8 flag Node refuses in NODE_OPTIONS, so set here; V8 reads it at every full collection, so set
 * once the process runs it takes effect from the next one. 0 leaves V8's own factors.
 */
export function limitHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
