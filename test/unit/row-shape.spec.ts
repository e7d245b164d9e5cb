import type { DataSource } from 'typeorm';
import { RowShapeError, rowShape, tableShape, typed, withColumns } from '../../src/database/row-shape';
import { twins } from '../../src/database/schema';
import { Sql } from '../../src/database/sql';

/** A data source whose every answer is `answers.next` (outside a transaction Sql goes straight to it). */
function answering() {
  const state = { next: [] as unknown, calls: 0 };
  const dataSource = {
    query: async () => {
      state.calls++;
      return state.next;
    },
  } as unknown as DataSource;
  return { state, sql: new Sql(dataSource) };
}

describe('row shapes', () => {
  const VERSIONED = rowShape({ id: 'uuid', version: 'text', count: 'bigint?' });

  it('fails the first answer that lacks a declared column, naming the statement and the column', async () => {
    const { state, sql } = answering();
    state.next = [{ id: 'a', count: 1 }];
    const text = 'SELECT id, count(*) AS count FROM twins /* missing */';
    await expect(sql.rows(VERSIONED, text)).rejects.toThrow(RowShapeError);
    await expect(sql.rows(VERSIONED, text)).rejects.toThrow(`(missing: version): ${text}`);
  });

  it('fails on a column the shape does not declare', async () => {
    const { state, sql } = answering();
    state.next = [{ id: 'a', version: '1', count: null, secret: 'x' }];
    await expect(sql.first(VERSIONED, 'SELECT *, secret FROM t /* extra */')).rejects.toThrow('not declared: secret');
  });

  it('checks a text once: a later answer is not compared again', async () => {
    const { state, sql } = answering();
    const text = 'SELECT id, version, count FROM t /* once */';
    state.next = [{ id: 'a', version: '1', count: 2 }];
    expect(await sql.rows(VERSIONED, text)).toEqual([{ id: 'a', version: '1', count: 2 }]);
    // Were it compared again, this answer would fail (no `version`).
    state.next = [{ id: 'b', count: 3 }];
    expect(await sql.first(VERSIONED, text)).toEqual({ id: 'b', count: 3 });
    expect(state.calls).toBe(2);
  });

  it('leaves a text that answered no rows (and no column names) to a later answer', async () => {
    const { state, sql } = answering();
    const text = 'SELECT id FROM t /* empty first */';
    state.next = [];
    expect(await sql.rows(VERSIONED, text)).toEqual([]);
    state.next = [{ id: 'a' }];
    await expect(sql.rows(VERSIONED, text)).rejects.toThrow('missing: version, count');
  });

  it('reads the rows of an UPDATE … RETURNING, and the count of one without', async () => {
    const { state, sql } = answering();
    state.next = [[{ id: 'a', version: '1', count: 0 }], 1];
    expect(await sql.rows(VERSIONED, 'UPDATE t SET x = 1 RETURNING id, version, count')).toEqual([{ id: 'a', version: '1', count: 0 }]);
    state.next = [[], 4];
    expect(await sql.affected('DELETE FROM t')).toBe(4);
    state.next = [{ n: 1 }];
    await expect(sql.affected('SELECT 1 AS n')).rejects.toThrow('Not an UPDATE or DELETE');
  });

  it('takes a table row from the schema, with computed columns after it', async () => {
    const shape = withColumns(tableShape(twins, ['id', 'name']), { version: 'text', position: typed<string[] | null>() });
    expect(shape.columns).toEqual(['id', 'name', 'version', 'position']);
    const { state, sql } = answering();
    state.next = [{ version: '7' }];
    expect(await sql.value(rowShape({ version: 'text' }), 'SELECT 7 AS version')).toBe('7');
    state.next = [];
    await expect(sql.value(rowShape({ version: 'text' }), 'SELECT 7 AS version WHERE false')).rejects.toThrow('No row where one was certain');
  });
});
