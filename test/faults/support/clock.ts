import { performance } from 'node:perf_hooks';

/** One monotonic clock (milliseconds) for requests and scenario marks, so they can be compared. */
export const now = (): number => performance.now();
