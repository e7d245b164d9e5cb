import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../../src/common/json-api/error.filter';

/** Just enough of a Fastify request/reply pair to see what sendError sends and logs. */
function exchange(raw: { destroyed: boolean; socket: { destroyed: boolean } }) {
  const sent: { status?: number; body?: unknown } = {};
  const reply = {
    sent: false,
    status(code: number) {
      sent.status = code;
      return this;
    },
    headers() {
      return this;
    },
    header() {
      return this;
    },
    send(body: unknown) {
      sent.body = body;
      return this;
    },
  };
  const request = { id: 'r1', method: 'POST', url: '/events/', raw, routeOptions: { url: '/events' } };
  const logged: string[] = [];
  return { reply: reply as unknown as FastifyReply, request: request as unknown as FastifyRequest, sent, logger: { error: (line: unknown) => logged.push(String(line)) }, logged };
}

const reset = (message: string) => Object.assign(new Error(message), { code: 'ECONNRESET' });

describe('sendError and connection resets', () => {
  it('a database connection reset after the body was read still answers 503 (the body stream is destroyed once read)', () => {
    const { reply, request, sent, logger } = exchange({ destroyed: true, socket: { destroyed: false } });
    sendError(reply, request, reset('read ECONNRESET'), logger);
    expect(sent.status).toBe(503);
    expect(JSON.parse(String(sent.body))).toEqual({ errors: [expect.objectContaining({ status: '503', code: 'database_unavailable' })] });
  });

  it('a client that hung up mid-body is neither answered nor logged as a failure', () => {
    const { reply, request, sent, logger, logged } = exchange({ destroyed: true, socket: { destroyed: true } });
    sendError(reply, request, reset('aborted'), logger);
    expect(sent.status).toBeUndefined();
    expect(logged).toEqual([]);
  });
});
