import type { AuthRepository, ResolvedCredentials } from '../../src/common/auth/auth.repository';
import { Credentials } from '../../src/common/auth/credentials';
import type { DatabaseNotifications } from '../../src/database/notifications';

/**
 * The cache's timing rules (credentials.ts), with the database's answers played by a fake repository
 * whose lookups the test settles by hand. The cache against real PostgreSQL and its notices:
 * test/e2e/credentials.e2e-spec.ts.
 */
describe('Credentials', () => {
  const ALICE: ResolvedCredentials = { tokenId: 't1', expires: null, account: { id: 'a1', name: 'Alice' }, organization: { id: 'o1', name: 'Org' } };
  let now: number;
  let lookups: { resolve: (value: ResolvedCredentials | undefined) => void; reject: (error: Error) => void }[];
  let credentials: Credentials;
  let notice: () => void;

  beforeEach(async () => {
    now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    lookups = [];
    const repository = {
      resolve: () => new Promise<ResolvedCredentials | undefined>((resolve, reject) => lookups.push({ resolve, reject })),
    } as unknown as AuthRepository;
    const notifications = {
      onConnection: (handler: (listening: boolean) => void) => handler(true),
      subscribe: async (_channel: string, handler: () => void) => void (notice = handler),
    } as unknown as DatabaseNotifications;
    credentials = new Credentials(repository, notifications);
    await credentials.onModuleInit();
  });
  afterEach(() => jest.restoreAllMocks());

  const ask = () => credentials.resolve('secret', 'o1', undefined);
  /** Settles the oldest unsettled lookup and lets the cache see it. */
  const answer = async (value: ResolvedCredentials | undefined) => {
    lookups.shift()!.resolve(value);
    await new Promise((resolve) => setImmediate(resolve));
  };
  /** A first request, answered `value` by the database. */
  const askAnswered = async (value: ResolvedCredentials | undefined) => {
    const first = ask();
    await answer(value);
    return first;
  };

  it('requests that miss together share one lookup, and the next is answered from the cache', async () => {
    const first = ask();
    const second = ask();
    expect(lookups).toHaveLength(1);
    await answer(ALICE);
    await expect(first).resolves.toEqual(ALICE);
    await expect(second).resolves.toEqual(ALICE);
    expect(ask()).toEqual(ALICE); // synchronously, from the cache
    expect(lookups).toHaveLength(0);
  });

  it('an entry in use is looked up again behind the request after 45 s, and never expires in front of one', async () => {
    await askAnswered(ALICE);
    now += 44_000;
    expect(ask()).toEqual(ALICE);
    expect(lookups).toHaveLength(0);
    now += 2_000; // 46 s old: served, and one lookup behind it however many requests come
    expect(ask()).toEqual(ALICE);
    expect(ask()).toEqual(ALICE);
    expect(lookups).toHaveLength(1);
    await answer(ALICE);
    now += 50_000; // 96 s after the first lookup, 50 s after the refresh: still served, refreshed again
    expect(ask()).toEqual(ALICE);
    expect(lookups).toHaveLength(1);
  });

  it('an entry not used for 60 s is looked up in front of the request', async () => {
    await askAnswered(ALICE);
    now += 60_000;
    const late = ask();
    expect(late).toBeInstanceOf(Promise);
    await answer(ALICE);
    await expect(late).resolves.toEqual(ALICE);
  });

  it('a refresh that finds the token gone drops the entry: the next request is asked in front', async () => {
    await askAnswered(ALICE);
    now += 46_000;
    expect(ask()).toEqual(ALICE);
    await answer(undefined);
    const next = ask();
    expect(next).toBeInstanceOf(Promise);
    await answer(undefined);
    await expect(next).resolves.toBeUndefined();
  });

  it('a failed refresh leaves the entry to its age', async () => {
    await askAnswered(ALICE);
    now += 46_000;
    expect(ask()).toEqual(ALICE);
    lookups.shift()!.reject(new Error('connection lost'));
    await new Promise((resolve) => setImmediate(resolve));
    now += 5_000;
    expect(ask()).toEqual(ALICE);
  });

  it('a request after a notice does not take a lookup begun before it, nor is that answer kept', async () => {
    const before = ask();
    notice();
    const after = ask();
    expect(lookups).toHaveLength(2);
    await answer(ALICE); // the answer read before the notice
    await expect(before).resolves.toEqual(ALICE);
    await answer(undefined); // the change the notice announced
    await expect(after).resolves.toBeUndefined();
    const next = ask();
    expect(next).toBeInstanceOf(Promise);
  });

  it('an incomplete answer (no such membership) is not kept, and not shared past its own lookup', async () => {
    await askAnswered({ ...ALICE, organization: undefined });
    const again = ask();
    expect(again).toBeInstanceOf(Promise);
    expect(lookups).toHaveLength(1);
  });
});
