import { get, type ClientRequest, type IncomingMessage } from 'node:http';

export interface SseMessage {
  event?: string;
  id?: string;
  data?: string;
}

/** A minimal server-sent-events client over a real socket: collects messages and comment lines. */
export class SseClient {
  readonly messages: SseMessage[] = [];
  readonly comments: string[] = [];
  ended = false;
  private buffer = '';
  private waiters: (() => void)[] = [];

  private constructor(
    private readonly request: ClientRequest,
    readonly response: IncomingMessage,
  ) {
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      this.buffer += chunk;
      let end: number;
      while ((end = this.buffer.indexOf('\n\n')) >= 0) {
        this.parse(this.buffer.slice(0, end));
        this.buffer = this.buffer.slice(end + 2);
      }
      this.notify();
    });
    response.on('end', () => {
      this.ended = true;
      this.notify();
    });
    response.on('error', () => undefined);
  }

  static open(port: number, headers: Record<string, string>, path = '/events/stream'): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const request = get({ host: '127.0.0.1', port, path, headers: { accept: 'text/event-stream', ...headers } }, (response) =>
        resolve(new SseClient(request, response)),
      );
      request.on('error', reject);
    });
  }

  /** The whole body of a non-stream (error) answer. */
  async body(): Promise<string> {
    await this.until(() => this.ended, 'the response to end');
    return this.buffer;
  }

  private parse(block: string): void {
    const message: SseMessage = {};
    let isMessage = false;
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
      else if (line.startsWith('retry:')) continue;
      else {
        const colon = line.indexOf(':');
        const field = line.slice(0, colon);
        const value = line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event' || field === 'id' || field === 'data') {
          message[field] = value;
          isMessage = true;
        }
      }
    }
    if (isMessage) this.messages.push(message);
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  async until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.messages)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 100));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits for `count` messages and returns them. */
  async take(count: number): Promise<SseMessage[]> {
    await this.until(() => this.messages.length >= count, `${count} message(s)`);
    return this.messages.slice(0, count);
  }

  close(): void {
    this.request.destroy();
  }
}
