import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { withinBudget } from '../../src/common/auth/rate-limit-store';

/** Blocks the event loop, as a long garbage collection or a large synchronous parse does. */
function pause(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

/** withinBudget as a promise, for the assertions. */
const budgeted = <T>(start: (reply: (error?: Error | null, value?: T) => void) => void, budgetMs: number) =>
  new Promise<T>((resolve, reject) => withinBudget<T>(start, budgetMs, (error, value) => (error ? reject(error) : resolve(value as T))));

/** A promise's outcome as a node-style reply. */
const from = <T>(promise: Promise<T>) => (reply: (error?: Error | null, value?: T) => void) => {
  promise.then((value) => reply(null, value), (error: Error) => reply(error));
};

describe('withinBudget (the Redis command budget of the rate-limit store)', () => {
  let peer: ChildProcess;
  let client: Socket;

  beforeAll(async () => {
    // A peer that answers every byte at once, like a healthy Redis; in a process of its own, so it
    // answers while this one is paused.
    peer = spawn(process.execPath, [
      '-e',
      "const s = require('net').createServer((c) => c.on('data', (d) => c.write(d))).listen(0, '127.0.0.1', () => console.log(s.address().port))",
    ]);
    const port = await new Promise<number>((resolve) => peer.stdout!.once('data', (data: Buffer) => resolve(Number(data.toString().trim()))));
    client = connect(port, '127.0.0.1');
    await new Promise((resolve) => client.once('connect', resolve));
  });
  afterAll(() => {
    client.destroy();
    peer.kill();
  });

  const roundTrip = () => new Promise<string>((resolve) => {
    client.once('data', (data) => resolve(data.toString()));
    client.write('PING');
  });

  it('passes a reply that comes in time through', async () => {
    await expect(budgeted(from(roundTrip()), 50)).resolves.toBe('PING');
  });

  it('rejects once the budget passed without a reply', async () => {
    const started = Date.now();
    await expect(budgeted(() => undefined, 30)).rejects.toThrow('did not answer within 30 ms');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('answers once: a reply after the timeout is dropped', async () => {
    const verdicts: string[] = [];
    let late: ((error?: Error | null, value?: string) => void) | undefined;
    // Waits for the verdict itself rather than a fixed time: on a loaded machine a 40 ms timer can fire in
    // the same timers phase as the budget's, before the verdict's setImmediate has run.
    const timedOut = new Promise<void>((resolve) =>
      withinBudget<string>((reply) => (late = reply), 10, (error, value) => {
        verdicts.push(error ? error.message : value!);
        resolve();
      }),
    );
    await timedOut;
    late!(null, 'late');
    await new Promise((resolve) => setImmediate(resolve));
    expect(verdicts).toEqual(['Redis did not answer within 10 ms']);
  });

  it('passes through a rejection', async () => {
    await expect(budgeted((reply) => reply(new Error('NOSCRIPT')), 50)).rejects.toThrow('NOSCRIPT');
  });

  it('does not take a reply that arrived during a pause of the process for a timeout', async () => {
    // The reply lands in the socket while the loop is blocked past the budget; the budget's timer then
    // fires before the socket is read. A verdict taken in the timer itself would call this a timeout.
    const outcomes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const reply = budgeted(from(roundTrip()), 20);
      pause(80);
      outcomes.push(await reply.then(() => 'answered', (error: Error) => error.message));
    }
    expect(outcomes).toEqual(Array(5).fill('answered'));
  });
});
