import { createServer, type Server, type Socket } from 'node:net';
import { DatabaseLiveness, NOT_ANSWERING_MESSAGE, type InFlightStatement } from '../../src/database/liveness';

/**
 * A loopback server standing in for PostgreSQL: `silent` accepts connections and never writes a byte
 * (a frozen server: the kernel accepts, nobody greets); `refusing` answers every connection with a
 * FATAL ErrorResponse of its own (too many connections): a server that runs.
 */
class FakeServer {
  mode: 'silent' | 'refusing' = 'silent';
  private readonly sockets = new Set<Socket>();
  private readonly server: Server = createServer((socket) => {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.once('data', () => {
      if (this.mode === 'refusing') socket.end(errorResponse('53300', 'sorry, too many clients already'));
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `postgresql://postgres@127.0.0.1:${(this.server.address() as { port: number }).port}/twins`;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** PostgreSQL's ErrorResponse message: 'E', its length, then S/C/M fields, each NUL-terminated, and a final NUL. */
function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0C${code}\0M${message}\0\0`);
  const header = Buffer.alloc(5);
  header.write('E');
  header.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([header, fields]);
}

/** A statement that records how it was failed. */
function statement(): InFlightStatement & { failed?: Error } {
  const s: InFlightStatement & { failed?: Error } = { fail: (error) => (s.failed = error) };
  return s;
}

const waitFor = async (condition: () => boolean, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return condition();
};

describe('DatabaseLiveness', () => {
  let server: FakeServer;
  let liveness: DatabaseLiveness | undefined;

  beforeEach(() => {
    server = new FakeServer();
  });

  afterEach(async () => {
    liveness?.close();
    await server.stop();
  });

  it('declares a silent server frozen after the stall bound and a failed probe, fails what is in flight, refuses until it answers', async () => {
    liveness = new DatabaseLiveness(await server.start(), 200);
    const stuck = statement();
    const started = Date.now();
    liveness.started(stuck);
    expect(await waitFor(() => stuck.failed !== undefined, 3000)).toBe(true);
    // Stall bound (200 ms) + the probe's connect bound (1 s) + at most one check interval.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1100);
    expect(stuck.failed?.message).toBe(NOT_ANSWERING_MESSAGE);
    expect(liveness.frozen).toBe(true);
    // The server answers again (here with an error of its own, which is an answer): the watch lets work through.
    server.mode = 'refusing';
    expect(await waitFor(() => !liveness!.frozen, 3000)).toBe(true);
  });

  it('leaves a busy server alone: a long statement with an answering probe is not failed', async () => {
    server.mode = 'refusing';
    liveness = new DatabaseLiveness(await server.start(), 200);
    const long = statement();
    liveness.started(long);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(long.failed).toBeUndefined();
    expect(liveness.frozen).toBe(false);
    liveness.settled(long, true);
  });

  it('does not probe while statements are answered, nor when none is in flight', async () => {
    liveness = new DatabaseLiveness(await server.start(), 200);
    // Nothing in flight for longer than the stall bound: nothing to suspect.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(liveness.frozen).toBe(false);
    // Statements in flight one after another, each answered well within the bound.
    const until = Date.now() + 1500;
    const pending: (InFlightStatement & { failed?: Error })[] = [];
    while (Date.now() < until) {
      const s = statement();
      pending.push(s);
      liveness.started(s);
      await new Promise((resolve) => setTimeout(resolve, 50));
      liveness.settled(s, true);
    }
    expect(pending.filter((s) => s.failed)).toEqual([]);
    expect(liveness.frozen).toBe(false);
  });
});
