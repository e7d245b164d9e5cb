import { join } from 'node:path';
import { freePort, PgCluster } from './support/pg-cluster';
import { PRODUCTION_NODE_OPTIONS, ServiceProcess } from './support/service-process';

/**
 * HEAP_GROWING_PERCENT on the built service (src/common/heap-growth.ts): V8 sets the heap's next limit
 * with that factor after a full collection, and with its own when the setting is 0.
 */
describe('faults: heap growth between full collections (built service)', () => {
  let cluster: PgCluster;

  beforeAll(async () => {
    cluster = await PgCluster.create();
    await cluster.createDatabase('heap');
  });
  afterAll(async () => {
    await cluster?.destroy();
  });

  /** The factors V8 printed for the heap's limit, the last one from the full collection as the service exits. */
  async function heapFactors(env: Record<string, string>): Promise<number[]> {
    const port = await freePort();
    const service = await ServiceProcess.start({
      port,
      databaseUrl: cluster.url('heap'),
      env: { ...env, NODE_OPTIONS: `${PRODUCTION_NODE_OPTIONS} --require ${join(__dirname, 'support', 'gc-factor.cjs')}` },
    });
    expect((await fetch(`http://127.0.0.1:${port}/twins/`)).status).toBe(401);
    const exit = await service.stop();
    expect(exit.code).toBe(0);
    return [...service.logs.matchAll(/\[HeapController\] factor (\d+(?:\.\d+)?)/g)].map((match) => Number(match[1]));
  }

  it('grows the heap by 50 % past what was live by default', async () => {
    expect((await heapFactors({})).at(-1)).toBe(1.5);
  });

  it('grows it by what HEAP_GROWING_PERCENT says', async () => {
    expect((await heapFactors({ HEAP_GROWING_PERCENT: '30' })).at(-1)).toBe(1.3);
  });

  it("leaves V8's own factor with HEAP_GROWING_PERCENT=0", async () => {
    // V8 scales its own between 1.1 and 1.6 (under this heap cap) by how fast the collector runs against
    // how fast the program allocates: an idle process gets the least, or the most when it has no speeds yet.
    expect([1.1, 1.6]).toContain((await heapFactors({ HEAP_GROWING_PERCENT: '0' })).at(-1));
  });
});
