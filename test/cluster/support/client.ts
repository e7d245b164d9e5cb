import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { sleep } from '../../faults/support/service-process';

export const JSON_API = 'application/vnd.api+json';

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Node's error code when no answer came (ECONNRESET, ECONNREFUSED, CLIENT_TIMEOUT…). */
  error?: string;
}

/** One HTTP request to 127.0.0.1:`port`; never throws (a missing answer is status 0 with `error`). */
export function call(
  port: number,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string; agent?: Agent; timeoutMs?: number } = {},
): Promise<Answer> {
  const headers: Record<string, string | number> = { ...options.headers };
  if (options.body !== undefined) headers['content-length'] = Buffer.byteLength(options.body);
  return new Promise((resolve) => {
    let settled = false;
    const done = (answer: Answer) => {
      if (!settled) {
        settled = true;
        resolve(answer);
      }
    };
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: options.agent ?? false, timeout: options.timeoutMs ?? 15_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (error: NodeJS.ErrnoException) => done({ status: 0, headers: {}, body: '', error: error.code ?? error.message }));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('client timeout'), { code: 'CLIENT_TIMEOUT' })));
    req.on('error', (error: NodeJS.ErrnoException) => done({ status: 0, headers: {}, body: '', error: error.code ?? error.message }));
    req.end(options.body);
  });
}

/** `<status> <errors[0].code>`, `<status> non-JSON:API` when the body is no errors document, or `no answer: <code>`. */
export function errorKind(answer: Answer): string {
  if (answer.status === 0) return `no answer: ${answer.error}`;
  const code = errorsDocument(answer)?.[0]?.code;
  return code === undefined ? `${answer.status} non-JSON:API` : `${answer.status} ${code}`;
}

export function errorsDocument(answer: Answer): { code?: string; detail?: string }[] | undefined {
  if (!String(answer.headers['content-type'] ?? '').startsWith(JSON_API)) return undefined;
  try {
    const parsed = JSON.parse(answer.body) as { errors?: { code?: string; detail?: string }[] };
    return Array.isArray(parsed.errors) && parsed.errors.length > 0 ? parsed.errors : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a client may retry with the same request (and Idempotency-Key): no answer at all (the
 * connection failed or was reset), a 502/503/504 errors document (the proxy found no replica, or the
 * replica is shutting down / lost its database), and the documented 409 "still in progress" for a key
 * whose first attempt has not committed yet. A hang (CLIENT_TIMEOUT) is not: nothing may hang.
 */
export function retryable(answer: Answer): boolean {
  if (answer.status === 0) return answer.error !== 'CLIENT_TIMEOUT';
  const errors = errorsDocument(answer);
  if (!errors) return false;
  if ([502, 503, 504].includes(answer.status)) return true;
  return answer.status === 409 && errors[0].code === 'conflict' && /still in progress/.test(errors[0].detail ?? '');
}

/** How long to wait before the retry: Retry-After when given (capped at 2 s), else 100–300 ms. */
export function retryDelay(answer: Answer): number {
  const after = Number(answer.headers['retry-after']);
  const jitter = 100 + Math.random() * 200;
  return Number.isFinite(after) && after > 0 ? Math.min(after * 1000, 2000) * (0.5 + Math.random() / 2) : jitter;
}

export interface StreamMessage {
  event: string;
  position: number;
  id: string | undefined;
  /** Which connection (0 = the first) carried it. */
  connection: number;
}

/**
 * A `GET /events/stream` client that resumes: the first connection goes to `firstPort` (one replica,
 * directly), every later one to `resumePort` (the proxy) with `Last-Event-ID` set to the last position
 * received. Keeps every message in order of arrival.
 */
export class StreamFollower {
  readonly messages: StreamMessage[] = [];
  readonly connections: { port: number; status: number; lastEventId: string | undefined; error?: string }[] = [];
  private stopped = false;
  private current: ReturnType<typeof request> | undefined;
  private lastId: string | undefined;
  private loop: Promise<void> | undefined;
  private firstOpen: (() => void) | undefined;
  readonly opened = new Promise<void>((resolve) => (this.firstOpen = resolve));

  constructor(
    private readonly headers: Record<string, string>,
    private readonly firstPort: number,
    private readonly resumePort: number,
  ) {}

  start(): this {
    this.loop = this.run();
    return this;
  }

  /** Messages of one kind whose resource id is `id`. */
  has(id: string): boolean {
    return this.messages.some((message) => message.id === id);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.destroy();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const connection = this.connections.length;
      const port = connection === 0 ? this.firstPort : this.resumePort;
      await this.connect(port, connection);
      if (!this.stopped) await sleep(200);
    }
  }

  private connect(port: number, connection: number): Promise<void> {
    const headers: Record<string, string> = { ...this.headers, accept: 'text/event-stream' };
    if (this.lastId !== undefined) headers['last-event-id'] = this.lastId;
    const record = { port, status: 0, lastEventId: this.lastId } as StreamFollowerConnection;
    this.connections.push(record);
    return new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/events/stream', headers, agent: false }, (res) => {
        record.status = res.statusCode ?? 0;
        if (res.statusCode !== 200) {
          res.resume();
          res.on('end', resolve);
          res.on('error', () => resolve());
          return;
        }
        this.firstOpen?.();
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            this.parse(buffer.slice(0, end), connection);
            buffer = buffer.slice(end + 2);
          }
        });
        res.on('end', resolve);
        res.on('error', () => resolve());
      });
      this.current = req;
      req.on('error', (error: NodeJS.ErrnoException) => {
        record.error = error.code ?? error.message;
        resolve();
      });
      req.end();
    });
  }

  private parse(block: string, connection: number): void {
    let event = 'message';
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'id') id = value;
      else if (field === 'data') data.push(value);
    }
    if (id === undefined) return;
    this.lastId = id;
    let resourceId: string | undefined;
    try {
      resourceId = (JSON.parse(data.join('\n')) as { id?: string }).id;
    } catch {
      resourceId = undefined;
    }
    this.messages.push({ event, position: Number(id), id: resourceId, connection });
  }
}

type StreamFollowerConnection = { port: number; status: number; lastEventId: string | undefined; error?: string };
