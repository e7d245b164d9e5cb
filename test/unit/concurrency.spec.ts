import { ConcurrencyLimit } from '../../src/common/concurrency';

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ConcurrencyLimit', () => {
  it('runs work within the budget at once and queues the rest in arrival order', async () => {
    const limit = new ConcurrencyLimit(10);
    const started: string[] = [];
    const gates = { a: deferred(), b: deferred(), c: deferred(), d: deferred() };
    const job = (name: keyof typeof gates, cost: number) => limit.run(cost, async () => {
      started.push(name);
      await gates[name].promise;
      return name;
    });
    const results = [job('a', 6), job('b', 4), job('c', 5), job('d', 1)];
    await tick();
    expect(started).toEqual(['a', 'b']);
    gates.a.resolve();
    await tick();
    // a and b fill the budget; once a is done, c (5) and d (1) fit and start in arrival order.
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    gates.b.resolve();
    gates.c.resolve();
    gates.d.resolve();
    await expect(Promise.all(results)).resolves.toEqual(['a', 'b', 'c', 'd']);
  });

  it('lets a cost above the budget run alone, and frees the budget when work fails', async () => {
    const limit = new ConcurrencyLimit(3);
    await expect(limit.run(100, async () => { throw new Error('boom'); })).rejects.toThrow('boom');
    await expect(limit.run(3, async () => 'ran')).resolves.toBe('ran');
  });
});
