import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { now } from './clock';
import { JSON_API } from './load';

/**
 * Large request bodies sent the way real clients send them, with what came back. Two clients on
 * purpose: Node's fetch (undici) and the curl binary differ in how they react to an answer that
 * arrives while they are still sending (undici stops writing and reads it; curl waits for
 * `100 Continue` or not, and reports a reset as exit code 55/56), so each can miss a different fault.
 */

/** What happened to one request. `status` 0 means no HTTP answer (see `error`). */
export interface Outcome {
  client: string;
  kind: string;
  status: number;
  /** Why there was no answer: a Node error code (ECONNRESET, EPIPE, UND_ERR_SOCKET…) or `curl exit N`. */
  error?: string;
  contentType: string;
  /** The body is a JSON:API errors document whose every error has `status` = the HTTP status. */
  errorsDocument: boolean;
  /** `errors[0].code` when there is one. */
  code?: string;
  ms: number;
}

/** Incompressible bytes (size is what matters to the limits, not the format); one buffer reused for every upload. */
export function randomBody(bytes: number): Buffer {
  return randomBytes(bytes);
}

/** A syntactically valid events document of about `bytes` bytes (one long string in `data`). */
export function oversizedEventDocument(bytes: number): Buffer {
  const head = '{"data":{"type":"events","attributes":{"name":"oversized","category":"faults","data":{"blob":"';
  const tail = '"}}}}';
  return Buffer.from(head + 'x'.repeat(Math.max(0, bytes - head.length - tail.length)) + tail);
}

export interface Upload {
  kind: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * POST with Node's fetch, the body streamed in 64 KiB chunks (a ReadableStream, as a client uploading
 * a file does) with an explicit Content-Length, so the server can refuse it from the header alone.
 */
export async function postWithFetch(baseUrl: string, upload: Upload, timeoutMs = 30_000): Promise<Outcome> {
  const start = now();
  let offset = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= upload.body.length) return controller.close();
      controller.enqueue(upload.body.subarray(offset, (offset += 64 * 1024)));
    },
  });
  try {
    const response = await fetch(baseUrl + upload.path, {
      method: 'POST',
      body: stream,
      duplex: 'half',
      headers: { ...upload.headers, 'content-length': String(upload.body.length) },
      signal: AbortSignal.timeout(timeoutMs),
    } as RequestInit);
    const text = await response.text();
    const contentType = response.headers.get('content-type') ?? '';
    return { client: 'fetch', kind: upload.kind, ms: now() - start, ...inspect(response.status, contentType, text) };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const code = cause?.code ?? (error as NodeJS.ErrnoException).code ?? (error as Error).name;
    return { client: 'fetch', kind: upload.kind, status: 0, error: code, contentType: '', errorsDocument: false, ms: now() - start };
  }
}

/**
 * POST with the curl binary, the body read from a file and sent with Content-Length.
 * `expectContinue: false` sends `Expect:` (empty) so curl sends the body at once instead of waiting
 * for `100 Continue` — the case where the answer races the upload.
 */
export function postWithCurl(baseUrl: string, upload: Upload & { file: string }, options: { expectContinue: boolean; timeoutMs?: number }): Promise<Outcome> {
  const start = now();
  const client = options.expectContinue ? 'curl' : 'curl (no Expect)';
  const marker = '\n--faults-status--';
  // `--data-binary @file`, not `-T file`: with a URL ending in "/" curl appends the file name to it.
  const args = ['-sS', '--max-time', String(Math.ceil((options.timeoutMs ?? 30_000) / 1000)), '--data-binary', `@${upload.file}`];
  for (const [name, value] of Object.entries(upload.headers)) args.push('-H', `${name}: ${value}`);
  if (!options.expectContinue) args.push('-H', 'Expect:');
  args.push('-w', `${marker}%{http_code} %{content_type}`, baseUrl + upload.path);
  return new Promise((resolve) => {
    execFile('curl', args, { maxBuffer: 1024 * 1024, timeout: (options.timeoutMs ?? 30_000) + 5000 }, (error, stdout, stderr) => {
      const ms = now() - start;
      const at = stdout.lastIndexOf(marker);
      const [status, contentType = ''] = at >= 0 ? stdout.slice(at + marker.length).split(' ') : ['0'];
      const text = at >= 0 ? stdout.slice(0, at) : stdout;
      if (error) {
        // curl's exit code says how it failed (55: failed sending, 56: failed receiving, 52: empty reply, 28: timeout).
        const exit = (error as { code?: number | string }).code;
        resolve({ client, kind: upload.kind, status: 0, error: `curl exit ${exit}: ${stderr.trim()}`, contentType: '', errorsDocument: false, ms });
        return;
      }
      resolve({ client, kind: upload.kind, ms, ...inspect(Number(status), contentType, text) });
    });
  });
}

function inspect(status: number, contentType: string, text: string): Pick<Outcome, 'status' | 'contentType' | 'errorsDocument' | 'code'> {
  let errors: { status?: unknown; code?: unknown; title?: unknown }[] | undefined;
  try {
    errors = (JSON.parse(text) as { errors?: typeof errors }).errors;
  } catch {
    errors = undefined;
  }
  const errorsDocument =
    contentType.startsWith(JSON_API) &&
    Array.isArray(errors) &&
    errors.length > 0 &&
    errors.every((e) => e.status === String(status) && typeof e.code === 'string' && typeof e.title === 'string');
  return { status, contentType, errorsDocument, code: typeof errors?.[0]?.code === 'string' ? errors[0].code : undefined };
}

/** Runs `count` tasks, `concurrency` at a time, in order of index. */
export async function inPool<T>(count: number, concurrency: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}

/** `{"<client> <kind> <status or error>": count}`, for the figures. */
export function countOutcomes(outcomes: Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) {
    const key = `${o.client} ${o.kind} ${o.status === 0 ? o.error : o.status}${o.status >= 400 && !o.errorsDocument ? ' (no errors document)' : ''}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

/** Outcomes that are not the expected 413 errors document with code payload_too_large, described for a failure message. */
export function not413(outcomes: Outcome[]): string[] {
  return outcomes
    .filter((o) => o.status !== 413 || !o.errorsDocument || o.code !== 'payload_too_large')
    .map((o) => `${o.client} ${o.kind}: ${o.status === 0 ? o.error : `${o.status} ${o.contentType} code=${o.code}`} after ${Math.round(o.ms)} ms`);
}
