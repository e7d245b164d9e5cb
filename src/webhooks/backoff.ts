/** How retries are spaced (docs/WEBHOOKS.md, "Retries"). */
export interface RetryPolicy {
  baseMs: number;
  maxDelayMs: number;
  /** Retries stop once the next one would fall this long after the delivery was queued. */
  windowMs: number;
}

/**
 * The delay before the retry that follows failed attempt `attempt` (1 for the first): the exponential
 * step `base · 2^(attempt-1)`, capped, of which the upper half is random ("equal jitter"), so receivers
 * that failed together are not retried together, yet no delay is shorter than half its step.
 */
export function retryDelayMs(attempt: number, policy: Pick<RetryPolicy, 'baseMs' | 'maxDelayMs'>, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 52);
  const step = Math.min(policy.maxDelayMs, policy.baseMs * 2 ** exponent);
  return Math.round(step / 2 + (step / 2) * random());
}

/** When to try again after failed attempt `attempt`, or null when that would be past the window: the delivery has failed. */
export function nextAttemptAt(queuedAt: number, now: number, attempt: number, policy: RetryPolicy, random: () => number = Math.random): number | null {
  const at = now + retryDelayMs(attempt, policy, random);
  return at > queuedAt + policy.windowMs ? null : at;
}
