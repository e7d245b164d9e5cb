import { Logger } from '@nestjs/common';
import { Client } from 'pg';

export type NotificationHandler = (payload: string) => void;

/** Told when the listening connection comes up (`true`: every later commit will be announced) or goes down. */
export type ConnectionHandler = (listening: boolean) => void;

/**
 * The instance's one `LISTEN` connection: PostgreSQL's NOTIFY carries what other instances (and
 * statements run by anyone, through triggers) committed — timeline changes to the event streams,
 * credential changes to the credentials cache.
 *
 * A plain `pg.Client` (not a pooled connection: it is held for the life of the instance). Connected on
 * the first `subscribe`, kept afterwards, reconnected with backoff when the connection drops. While it
 * is down, notifications are lost: subscribers learn it through `onConnection` and act accordingly
 * (streams resume with `Last-Event-ID`; the credentials cache stops answering until it is back).
 */
export class DatabaseNotifications {
  private client: Client | undefined;
  private connecting: Promise<void> | undefined;
  private readonly handlers = new Map<string, NotificationHandler[]>();
  private readonly connectionHandlers: ConnectionHandler[] = [];
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelayMs = 500;

  constructor(
    private readonly url: string,
    private readonly logger = new Logger('Notifications'),
  ) {}

  get listening(): boolean {
    return this.client !== undefined;
  }

  /** Delivers every later notification on `channel` to `handler`; resolves once the channel is listened to. */
  subscribe(channel: string, handler: NotificationHandler): Promise<void> {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`Not a channel name: ${channel}`);
    const known = this.handlers.get(channel);
    if (!known) this.handlers.set(channel, [handler]);
    else if (!known.includes(handler)) known.push(handler);
    if (this.client && !known) return this.client.query(`LISTEN ${channel}`).then(() => undefined);
    return this.ensureConnected();
  }

  onConnection(handler: ConnectionHandler): void {
    this.connectionHandlers.push(handler);
  }

  private ensureConnected(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('The notification listener is closed.'));
    if (this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.url, application_name: 'twin-service-listen', connectionTimeoutMillis: 2000 });
    client.on('notification', (message) => {
      for (const handler of this.handlers.get(message.channel) ?? []) handler(message.payload ?? '');
    });
    client.on('error', (error) => {
      this.logger.warn(`listening connection failed: ${error.message}`);
      this.dropped(client);
    });
    client.on('end', () => this.dropped(client));
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.retryDelayMs = 500;
    for (const handler of this.connectionHandlers) handler(true);
  }

  private dropped(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    for (const handler of this.connectionHandlers) handler(false);
    void client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.closed || this.client) return;
      this.ensureConnected().catch((error: Error) => {
        this.logger.warn(`reconnecting the listening connection failed: ${error.message}`);
        this.retryDelayMs = Math.min(this.retryDelayMs * 2, 30_000);
        this.scheduleReconnect();
      });
    }, this.retryDelayMs);
    this.retryTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    }
  }
}
