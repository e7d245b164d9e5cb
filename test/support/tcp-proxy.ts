import { createConnection, createServer, Server, Socket } from 'node:net';

/**
 * A loopback TCP proxy in front of the test database (or Redis), so a test can cut the service off from
 * it (and restore it) without stopping the server other tests share.
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  port = 0;
  private frozen = false;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  static forUrl(url: string): TcpProxy {
    const parsed = new URL(url);
    return new TcpProxy(parsed.hostname, Number(parsed.port || 5432));
  }

  /** The database URL rewritten to go through this proxy. */
  rewrite(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  async start(port = 0): Promise<void> {
    this.server = createServer((client) => {
      const upstream = createConnection(this.targetPort, this.targetHost);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
      if (this.frozen) {
        client.pause();
        upstream.pause();
      }
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  /** Keeps every connection open but lets no byte through: a database that stopped answering. */
  freeze(): void {
    this.frozen = true;
    for (const socket of this.sockets) socket.pause();
  }

  /** Lets bytes through again on the connections kept open by freeze(): what was held back arrives now. */
  thaw(): void {
    this.frozen = false;
    for (const socket of this.sockets) socket.resume();
  }

  /** Refuses new connections and drops the open ones, as a database outage would. */
  async stop(): Promise<void> {
    this.frozen = false;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }
}
