import { randomUUID } from 'node:crypto';
import { statementName } from '../../src/database/pooled-queries';
import { rowShape } from '../../src/database/row-shape';
import { Sql } from '../../src/database/sql';
import { embeddedDatabase, TestApp } from '../support/test-app';

/**
 * Statements with parameters run as named prepared statements on real PostgreSQL (pooled-queries.ts):
 * seen from the connection that ran them, in `pg_prepared_statements`, under the digest of their text.
 * The embedded database runs them unnamed (one session shared by every connection).
 */
describe('prepared statements', () => {
  let app: TestApp;
  let sql: Sql;

  beforeAll(async () => {
    app = await TestApp.start();
    sql = app.app.get(Sql);
  });
  afterAll(() => app.close());

  (embeddedDatabase() ? it.skip : it)('prepares a statement once per connection under its name, and each execution gets its own values', async () => {
    // A text no other test runs, so the statement is new to the connection.
    const text = `SELECT $1::int AS n, $2::text AS probe -- ${randomUUID()}`;
    const PROBE = rowShape({ n: 'integer', probe: 'text' });
    const seen = await sql.transaction(async () => {
      const first = await sql.rows(PROBE, text, [1, 'a']);
      const second = await sql.rows(PROBE, text, [2, 'b']);
      const prepared = await sql.rows(rowShape({ statement: 'text' }), 'SELECT statement FROM pg_prepared_statements WHERE name = $1', [statementName(text)]);
      return { first, second, prepared };
    });
    expect(seen.first).toEqual([{ n: 1, probe: 'a' }]);
    expect(seen.second).toEqual([{ n: 2, probe: 'b' }]);
    expect(seen.prepared).toEqual([{ statement: text }]);
  });

  (embeddedDatabase() ? it.skip : it)('runs statements without parameters unnamed', async () => {
    const text = `SELECT 1 AS one -- ${randomUUID()}`;
    const prepared = await sql.transaction(async () => {
      await sql.run(text);
      return sql.exists('SELECT 1 FROM pg_prepared_statements WHERE statement = $1', [text]);
    });
    expect(prepared).toBe(false);
  });

  it('answers a statement the database refuses with the driver error, and the connection goes on', async () => {
    await expect(sql.query('SELECT $1::int AS n', ['not a number'])).rejects.toMatchObject({ driverError: { code: '22P02' } });
    await expect(sql.query('SELECT $1::int AS n', [3])).resolves.toEqual([{ n: 3 }]);
  });
});
