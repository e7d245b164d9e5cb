import { randomUUID } from 'node:crypto';
import { RowShapeError, rowShape } from '../../src/database/row-shape';
import { Sql } from '../../src/database/sql';
import { TestApp } from '../support/test-app';

/**
 * A statement's declared row shape against the columns the database answers (src/database/row-shape.ts),
 * through the pooled path (pg's `fields`) and inside a transaction (the first row's keys).
 */
describe('Row shapes on the database', () => {
  let app: TestApp;
  let sql: Sql;
  const table = `row_shape_probe_${randomUUID().replaceAll('-', '')}`;
  const PROBE = rowShape({ a: 'integer', b: 'integer' });

  beforeAll(async () => {
    app = await TestApp.start();
    sql = app.app.get(Sql);
    await sql.run(`CREATE TABLE ${table} (a int, b int)`);
  });
  afterAll(async () => {
    await sql.run(`DROP TABLE IF EXISTS ${table}`);
    await app.close();
  });

  it('fails the first pooled answer lacking a declared column, even with no rows, naming the statement and the column', async () => {
    const text = `SELECT a FROM ${table} WHERE a = $1`;
    const failure = sql.rows(PROBE, text, [1]);
    await expect(failure).rejects.toThrow(RowShapeError);
    await expect(sql.rows(PROBE, text, [1])).rejects.toThrow(`(missing: b): ${text}`);
  });

  it('checks a text once: after its columns matched, a later answer is not compared again', async () => {
    const text = `SELECT * FROM ${table}`;
    await sql.run(`INSERT INTO ${table} VALUES (1, 2)`);
    expect(await sql.rows(PROBE, text)).toEqual([{ a: 1, b: 2 }]);
    await sql.run(`ALTER TABLE ${table} DROP COLUMN b`);
    // Compared again, this answer would fail: `b` is gone.
    expect(await sql.rows(PROBE, text)).toEqual([{ a: 1 }]);
    await sql.run(`ALTER TABLE ${table} ADD COLUMN b int`);
  });

  it('inside a transaction reads the first row, and leaves a text that answered none to a later call', async () => {
    const text = `SELECT a, b, 0 AS c FROM ${table} WHERE a = $1`;
    expect(await sql.transaction(() => sql.rows(PROBE, text, [-1]))).toEqual([]);
    await expect(sql.transaction(() => sql.rows(PROBE, text, [1]))).rejects.toThrow('not declared: c');
  });
});
