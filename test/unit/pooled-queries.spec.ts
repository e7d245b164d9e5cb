import { EventEmitter } from 'node:events';
import type { DataSource } from 'typeorm';
import { QueryFailedError } from 'typeorm';
import { installPooledQueries, oneOffSql, READ_TIMEOUT_MESSAGE, statementName } from '../../src/database/pooled-queries';

type Callback = (error: Error | null, result?: unknown) => void;

/** A pooled pg client whose answers the test controls: each query waits until `answer()` or forever. */
class FakeClient extends EventEmitter {
  readonly calls: Array<{ text: unknown; values: unknown; callback: unknown; name?: string }> = [];
  readonly stream = { destroyed: false, destroy: () => (this.stream.destroyed = true) };
  readonly connection = { stream: this.stream };
  released: Array<Error | undefined> = [];
  private pending: Callback[] = [];

  query(text: unknown, values?: unknown, callback?: unknown): unknown {
    // As pg does: a submittable (its Query, a cursor) carries its own text, values, name and callback.
    if (typeof (text as { submit?: unknown }).submit === 'function') {
      const query = text as { text?: string; values?: unknown; name?: string; callback?: Callback };
      this.calls.push({ text: query.text ?? text, values: query.values, callback: query.callback, name: query.name });
      if (query.callback) this.pending.push(query.callback);
      return undefined;
    }
    this.calls.push({ text, values, callback });
    const done = (typeof values === 'function' ? values : callback) as Callback | undefined;
    if (done) this.pending.push(done);
    return undefined;
  }

  answer(rows: unknown[], command = 'SELECT'): void {
    this.pending.shift()?.(null, { rows, rowCount: rows.length, command });
  }

  release(error?: Error): void {
    this.released.push(error);
  }
}

function fakeDataSource(client: FakeClient) {
  const pool = Object.assign(new EventEmitter(), {
    connect: async () => {
      pool.emit('acquire', client);
      return client;
    },
  });
  const viaTypeOrm = jest.fn(async () => 'via typeorm');
  const dataSource = { driver: { master: pool }, query: viaTypeOrm } as unknown as DataSource;
  return { dataSource, pool, viaTypeOrm };
}

describe('installPooledQueries', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('answers dataSource.query outside transactions from the pool, in pg callback form', async () => {
    const client = new FakeClient();
    const { dataSource } = fakeDataSource(client);
    installPooledQueries(dataSource, { readTimeoutMs: 1000, preparedStatements: false });
    const result = dataSource.query('SELECT $1::int AS n', [1]);
    await jest.advanceTimersByTimeAsync(0);
    expect(typeof client.calls[0].callback).toBe('function');
    client.answer([{ n: 1 }]);
    await expect(result).resolves.toEqual([{ n: 1 }]);
    expect(client.released).toEqual([undefined]);
  });

  it('returns [rows, rowCount] for UPDATE and DELETE, as TypeORM does', async () => {
    const client = new FakeClient();
    const { dataSource } = fakeDataSource(client);
    installPooledQueries(dataSource, { readTimeoutMs: 1000, preparedStatements: false });
    const result = dataSource.query('DELETE FROM t RETURNING id', []);
    await jest.advanceTimersByTimeAsync(0);
    client.answer([{ id: 1 }, { id: 2 }], 'DELETE');
    await expect(result).resolves.toEqual([[{ id: 1 }, { id: 2 }], 2]);
  });

  it('fails a query the database does not answer within the read timeout, and discards the connection', async () => {
    const client = new FakeClient();
    const { dataSource } = fakeDataSource(client);
    installPooledQueries(dataSource, { readTimeoutMs: 1000, preparedStatements: false });
    const result = dataSource.query('SELECT pg_sleep(60)', []);
    const failure = expect(result).rejects.toBeInstanceOf(QueryFailedError);
    await jest.advanceTimersByTimeAsync(999);
    expect(client.stream.destroyed).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await failure;
    await expect(result).rejects.toThrow(READ_TIMEOUT_MESSAGE);
    expect(client.stream.destroyed).toBe(true);
    expect(client.released[0]).toBeInstanceOf(Error);
  });

  it('bounds the promise form on any checkout (TypeORM transactions check out through the same pool)', async () => {
    const client = new FakeClient();
    const { dataSource, pool } = fakeDataSource(client);
    installPooledQueries(dataSource, { readTimeoutMs: 500, preparedStatements: false });
    pool.emit('acquire', client);
    pool.emit('acquire', client);
    const begin = (client.query as (text: string) => Promise<unknown>)('BEGIN');
    const failure = expect(begin).rejects.toThrow(READ_TIMEOUT_MESSAGE);
    await jest.advanceTimersByTimeAsync(500);
    await failure;
    // One query reached the client, in pg's callback form.
    expect(client.calls).toHaveLength(1);
    expect(typeof client.calls[0].callback).toBe('function');
  });

  it('leaves callback-form and query-object calls to pg, unbounded', async () => {
    const client = new FakeClient();
    const { dataSource, pool } = fakeDataSource(client);
    installPooledQueries(dataSource, { readTimeoutMs: 500, preparedStatements: false });
    pool.emit('acquire', client);
    const callback = jest.fn();
    client.query('SELECT 1', [], callback);
    const cursor = { submit: () => undefined };
    client.query(cursor);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(client.stream.destroyed).toBe(false);
    expect(client.calls.map((c) => c.text)).toEqual(['SELECT 1', cursor]);
    expect(client.calls[0].callback).toBe(callback);
  });

  it('keeps TypeORM for calls inside a transaction (with a query runner)', async () => {
    const client = new FakeClient();
    const { dataSource, viaTypeOrm } = fakeDataSource(client);
    installPooledQueries(dataSource, { readTimeoutMs: 500, preparedStatements: false });
    const runner = {} as never;
    await expect(dataSource.query('SELECT 1', [], runner)).resolves.toBe('via typeorm');
    expect(viaTypeOrm).toHaveBeenCalledWith('SELECT 1', [], runner);
    expect(client.calls).toHaveLength(0);
  });

  it('adds no read timeout when it is 0 (migrations)', async () => {
    const client = new FakeClient();
    const { dataSource, pool } = fakeDataSource(client);
    installPooledQueries(dataSource, { readTimeoutMs: 0, preparedStatements: false });
    pool.emit('acquire', client);
    void (client.query as (text: string) => unknown)('CREATE EXTENSION postgis');
    await jest.advanceTimersByTimeAsync(60_000);
    expect(client.stream.destroyed).toBe(false);
    expect(client.calls[0].callback).toBeUndefined();
  });

  it('runs statements with parameters as named prepared statements, the name a digest of the text', async () => {
    const client = new FakeClient();
    const { dataSource, pool } = fakeDataSource(client);
    installPooledQueries(dataSource, { readTimeoutMs: 0, preparedStatements: true });
    const first = dataSource.query('SELECT $1::int AS n', [1]);
    await jest.advanceTimersByTimeAsync(0);
    client.answer([{ n: 1 }]);
    await first;
    pool.emit('acquire', client);
    void (client.query as (text: string, values?: unknown[]) => unknown)('SELECT $1::int AS n', [2]);
    void (client.query as (text: string) => unknown)('BEGIN');
    expect(client.calls[0]).toMatchObject({ name: statementName('SELECT $1::int AS n'), text: 'SELECT $1::int AS n', values: [1] });
    expect(client.calls[1]).toMatchObject({ name: client.calls[0].name, text: 'SELECT $1::int AS n', values: [2] });
    // Without parameters (transaction control, SET) a statement stays unnamed.
    expect(client.calls[2]).toMatchObject({ text: 'BEGIN', name: undefined });
  });
});

describe('statementName', () => {
  it('is the same for the same text, different for different texts, and a valid identifier', () => {
    const a = statementName('SELECT 1 WHERE $1');
    expect(statementName('SELECT 1 WHERE $1')).toBe(a);
    expect(statementName('SELECT 2 WHERE $1')).not.toBe(a);
    expect(a).toMatch(/^s_[A-Za-z0-9_-]{24}$/);
  });

  it('names no one-off text (a client-shaped filter): those run unnamed, taking no name', () => {
    expect(statementName(oneOffSql('SELECT 3 WHERE $1'))).toBeUndefined();
    expect(statementName(oneOffSql('SELECT 3 WHERE $1'))).toBeUndefined();
  });
});
