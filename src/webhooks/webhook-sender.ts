import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type * as Undici from 'undici';
import { hostOf, isPublicAddress } from './address-policy.js';

/** What one attempt came to: the receiver's status, or why there was none. */
export interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export const isSuccess = (outcome: AttemptOutcome): boolean => outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;

/** A receiver answer is read this far and no further: only its status matters. */
const MAX_ANSWER_BYTES = 64 * 1024;

export class RefusedAddressError extends Error {
  readonly code = 'ERR_WEBHOOK_ADDRESS';
}

/**
 * DNS answers for `hostname`, refused unless every address is public (or private ones are allowed). It
 * is the lookup the connection itself uses, so the address checked is the address connected to: a name
 * that resolves to a public address when the webhook is created and to 127.0.0.1 later (DNS rebinding)
 * is refused at that later connection.
 */
export function checkedLookup(allowPrivate: boolean, resolve: typeof dnsLookup = dnsLookup): LookupFunction {
  return ((hostname: string, options: { all?: boolean; family?: number }, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    resolve(hostname, { all: true, family: options.family ?? 0 }, (error, addresses) => {
      if (error) return callback(error, '');
      const refused = allowPrivate ? undefined : addresses.find((entry) => !isPublicAddress(entry.address));
      if (refused) return callback(new RefusedAddressError(`${hostname} resolves to ${refused.address}, which is not a public address`), '');
      if (addresses.length === 0) return callback(new Error(`${hostname} has no address`), '');
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  }) as LookupFunction;
}

/** Every address `hostname` resolves to (IP literals: themselves), for the check at create time. */
export async function resolveHost(hostname: string): Promise<string[]> {
  if (isIP(hostname)) return [hostname];
  return new Promise((resolvePromise, reject) =>
    dnsLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolvePromise(addresses.map((entry) => entry.address)))),
  );
}

/**
 * undici, loaded by the first delivery rather than at start: loaded, it enlarges the service's idle V8
 * heap, which every major garbage collection marks again, on every replica, also where no organization
 * has a webhook.
 */
let undici: typeof Undici | undefined;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadUndici = (): typeof Undici => (undici ??= require('undici') as typeof Undici);

/**
 * Sends the deliveries over one undici Agent: keep-alive connections per origin, every new connection
 * resolved through `checkedLookup`, each attempt bounded by the timeout as a whole (connection, headers
 * and the answer's bytes), redirects not followed (a 3xx is a failed attempt).
 */
export class WebhookSender {
  private agent: Undici.Agent | undefined;

  constructor(private readonly options: { timeoutMs: number; allowPrivate: boolean; connections: number }) {}

  private dispatcher(): Undici.Agent {
    this.agent ??= new (loadUndici().Agent)({
      connect: { lookup: checkedLookup(this.options.allowPrivate), timeout: this.options.timeoutMs },
      connections: this.options.connections,
      headersTimeout: this.options.timeoutMs,
      bodyTimeout: this.options.timeoutMs,
      keepAliveTimeout: 30_000,
    });
    return this.agent;
  }

  async send(url: string, headers: Record<string, string>, body: string, abort?: AbortSignal): Promise<AttemptOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const target = new URL(url);
    // An IP literal is connected to without a lookup: checked here instead (it cannot change).
    const host = hostOf(target);
    if (!this.options.allowPrivate && isIP(host) && !isPublicAddress(host)) {
      return { statusCode: null, error: `${host} is not a public address`, durationMs: elapsed() };
    }
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const signal = abort ? AbortSignal.any([timeout, abort]) : timeout;
    try {
      const dispatcher = this.dispatcher();
      const answer = await loadUndici().request(target, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json', 'user-agent': 'twin-service-webhooks/1', ...headers },
        body,
        signal,
      });
      await drain(answer.body);
      return { statusCode: answer.statusCode, error: null, durationMs: elapsed() };
    } catch (error) {
      return { statusCode: null, error: describe(error, timeout.aborted, this.options.timeoutMs), durationMs: elapsed() };
    }
  }

  async close(): Promise<void> {
    await this.agent?.destroy();
  }
}

async function drain(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<void> {
  let read = 0;
  for await (const chunk of body) {
    read += chunk.length;
    if (read > MAX_ANSWER_BYTES) {
      body.destroy();
      return;
    }
  }
}

function describe(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timed out after ${timeoutMs} ms`;
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message;
  }
  return String(error);
}
