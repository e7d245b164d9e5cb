import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { API_POLICY } from './content-security-policy.js';

/** One server-sent-events block; fields are written in this order, absent ones left out. */
export interface SseFrame {
  /** Reconnection delay suggested to EventSource clients, in milliseconds. */
  retry?: number;
  /** Comment lines: ignored by EventSource, they keep idle connections (and proxies) open. */
  comment?: string;
  event?: string;
  id?: string;
  data?: string;
}

/**
 * The bytes of one frame. Multi-line values become one field line per line, since a bare newline
 * would end the field (and a blank line the whole message) early.
 */
export function formatSseFrame(frame: SseFrame): string {
  let text = '';
  if (frame.retry !== undefined) text += `retry: ${frame.retry}\n`;
  if (frame.comment !== undefined) text += lines(':', frame.comment);
  if (frame.event !== undefined) text += `event: ${singleLine(frame.event)}\n`;
  if (frame.id !== undefined) text += `id: ${singleLine(frame.id)}\n`;
  if (frame.data !== undefined) text += lines('data:', frame.data);
  return `${text}\n`;
}

const lines = (field: string, value: string) =>
  value
    .split(/\r\n|\r|\n/)
    .map((line) => `${field} ${line}\n`)
    .join('');
// `event` and `id` have no continuation lines: anything after a line break would be read as another field.
const singleLine = (value: string) => value.replace(/[\r\n]/g, ' ');

/**
 * Headers of every event stream. The reply is hijacked, so Fastify's onSend hooks (which add the
 * security headers to every other answer) do not run for it.
 */
const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-store, no-transform',
  connection: 'keep-alive',
  // nginx would otherwise buffer the stream and deliver it in bursts.
  'x-accel-buffering': 'no',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': API_POLICY,
};

/** The event streams each server has open, so that closing the server can end them. */
const openStreams = new WeakMap<FastifyInstance, Set<() => void>>();

/**
 * Ends the open event streams when `fastify` closes: an open response would otherwise keep the
 * server's close waiting for a client that never hangs up. Call once, before the server is ready.
 */
export function endEventStreamsOnClose(fastify: FastifyInstance): void {
  fastify.addHook('preClose', (done) => {
    for (const end of [...(openStreams.get(fastify) ?? [])]) end();
    done();
  });
}

/**
 * Answers the request with `text/event-stream` and writes `messages` to it, each as the frame
 * `toFrame` makes of it, until the source ends, the client goes away or the server closes. The only
 * writer of event streams: sources (services) produce values and never see the response.
 *
 * - Errors must be thrown before this is called: once it runs the status is 200 and the reply is
 *   hijacked (headers that hooks already set, such as `X-Request-Id` and CORS, are kept).
 * - Backpressure: the next message is pulled only once the socket took the previous one (`drain`),
 *   so a slow client leaves messages queued in the source, which decides what to do about that.
 * - A disconnect (or the server's close) calls the iterator's `return()`, also while a `next()` is
 *   pending, so a source that answers `return()` at once releases its resources at once.
 *
 * Resolves when the response has ended; never rejects (the response is ours, not the framework's,
 * so a failing source is logged and the response ended).
 */
export async function sendEventStream<T>(request: FastifyRequest, reply: FastifyReply, messages: AsyncIterable<T>, toFrame: (message: T) => SseFrame): Promise<void> {
  const iterator = messages[Symbol.asyncIterator]();
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { ...headersOf(reply), ...STREAM_HEADERS });

  let stopped = false;
  let wakeWriter: (() => void) | undefined;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    wakeWriter?.();
    iterator.return?.().catch((error: Error) => request.log.warn(`ending an event stream's source failed: ${error.message}`));
  };
  raw.on('close', stop);
  const registry = registryOf(request.server);
  const finish = (closeConnection: boolean) => {
    const socket = raw.socket;
    if (!raw.writableEnded) raw.end();
    // The server closes only idle connections, and this one is not idle yet: without this its close
    // would wait for the client, or for the keep-alive timeout.
    if (closeConnection) socket?.end();
  };
  // Also when the source does not answer return() at once: the server's close must not wait for it.
  const stopForClose = () => {
    stop();
    finish(true);
  };
  registry.add(stopForClose);

  try {
    // A client gone before the head was written never emits 'close' again.
    if (raw.destroyed || request.raw.destroyed) stop();
    while (!stopped) {
      const next = await iterator.next();
      if (next.done || stopped) break;
      if (!raw.write(formatSseFrame(toFrame(next.value)))) await drained(raw, (wake) => (wakeWriter = wake));
      wakeWriter = undefined;
    }
  } catch (error) {
    request.log.warn(`event stream failed: ${(error as Error).message}`);
  } finally {
    registry.delete(stopForClose);
    raw.off('close', stop);
    // Whatever ended the loop, the source learns that nobody reads any more.
    stop();
    finish(false);
  }
}

function registryOf(fastify: FastifyInstance): Set<() => void> {
  let registry = openStreams.get(fastify);
  if (!registry) openStreams.set(fastify, (registry = new Set()));
  return registry;
}

/** Waits until the socket wants more, or until `stop` wakes the writer (disconnect, server close). */
function drained(raw: ServerResponse, onWake: (wake: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      raw.off('drain', done);
      resolve();
    };
    raw.on('drain', done);
    onWake(done);
  });
}

/** Headers other hooks already set on the reply (request id, CORS), kept on the hijacked response. */
function headersOf(reply: FastifyReply): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value : String(value);
  }
  return out;
}
