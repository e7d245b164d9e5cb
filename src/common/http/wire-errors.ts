import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { mapError } from '../json-api/error-mapper.js';
import { JSON_API_MEDIA_TYPE } from '../json-api/resource.js';

/**
 * Answers the failures that happen below routing, so that every answer the server gives is a
 * JSON:API errors document: Node's HTTP parser (oversized headers → 431, malformed requests → 400,
 * a request not received in time → 408) and an `Expect` other than `100-continue` (417); Fastify's
 * router failures (400 bad percent-encoding, 414 overlong path parameter) go through `frameworkErrors`
 * in app.factory.ts. Bodies come from the one error mapper.
 */

const PARSER_ERRORS = new Set(['HPE_HEADER_OVERFLOW', 'ERR_HTTP_REQUEST_TIMEOUT']);

/** The bytes of an errors document for one of the codes the error mapper knows. */
function errorDocument(code: string): { status: number; body: string } {
  const mapped = mapError(Object.assign(new Error(code), { code }));
  return { status: mapped.status, body: JSON.stringify(mapped.body) };
}

const BAD_REQUEST = JSON.stringify({
  errors: [{ status: '400', code: 'bad_request', title: 'Bad request', detail: 'The request is not valid HTTP/1.1.' }],
});

/**
 * Fastify's `clientErrorHandler`: Node's parser refused the request before any request object
 * exists, so the answer is written to the socket by hand (as Fastify's default does), then the
 * connection is closed: after a parse error the stream position is unknown.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, body } = PARSER_ERRORS.has(error.code ?? '') ? errorDocument(error.code!) : { status: 400, body: BAD_REQUEST };
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${statusText(status)}\r\nContent-Type: ${JSON_API_MEDIA_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/**
 * Node answers an `Expect` it does not know with a bare 417 unless the server listens for
 * `checkExpectation`: this answers it with the errors document. The body the client may still send
 * is read and discarded by Node before the connection is reused.
 */
export function answerUnknownExpectations(server: Server): void {
  server.on('checkExpectation', (_request: IncomingMessage, response: ServerResponse) => {
    const { status, body } = errorDocument('ERR_HTTP_EXPECTATION_FAILED');
    response.writeHead(status, { 'content-type': JSON_API_MEDIA_TYPE, 'content-length': Buffer.byteLength(body) });
    response.end(body);
  });
}

function statusText(status: number): string {
  return { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[status] ?? 'Error';
}

/**
 * Reads and discards what is left of a request body before an answer is sent, up to `maxBytes`.
 *
 * An answer given before the body was read (a 413 decided from `Content-Length`, a 415, a refusal
 * in a hook) would otherwise be followed by the connection closing while the client is still
 * sending: the client gets EPIPE/ECONNRESET instead of the answer, and a proxy in front (nginx)
 * answers 502 and marks the instance failed. Past `maxBytes` the rest is left unread and the
 * connection is closed after the answer, which is then all that can be done.
 */
export function drainUnreadBody(request: IncomingMessage, maxBytes: number): Promise<void> {
  if (request.complete || request.readableEnded || request.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let received = 0;
    const finish = () => {
      request.removeListener('data', onData);
      request.removeListener('end', finish);
      request.removeListener('error', finish);
      request.removeListener('close', finish);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBytes) {
        request.pause();
        finish();
      }
    };
    request.on('data', onData);
    request.once('end', finish);
    request.once('error', finish);
    request.once('close', finish);
    request.resume();
  });
}
