import { randomUUID } from 'node:crypto';
import { rowShape } from '../../src/database/row-shape';
import { Sql } from '../../src/database/sql';
import { embeddedDatabase, TestApp } from '../support/test-app';

/**
 * The ambient transaction of src/database/sql.ts, on whichever database the suite runs against (on the
 * embedded one, a statement outside the open transaction would wait forever for its only connection).
 */
describe('Sql transactions', () => {
  let app: TestApp;
  let sql: Sql;

  beforeAll(async () => {
    app = await TestApp.start();
    sql = app.app.get(Sql);
  });
  afterAll(() => app.close());

  const insertOrganization = (id: string) => sql.query('INSERT INTO organizations (id, name) VALUES ($1, $2)', [id, `tx ${id}`]);
  const exists = async (id: string) => (await app.dataSource.query('SELECT 1 FROM organizations WHERE id = $1', [id])).length === 1;

  it('runs every query made during the work, however deep, on the transaction: committed together', async () => {
    const first = randomUUID();
    const second = randomUUID();
    const seen = await sql.transaction(async () => {
      expect(sql.inTransaction).toBe(true);
      await insertOrganization(first);
      await insertOrganization(second);
      // A repository knows nothing of the transaction and still sees its uncommitted rows.
      const rows = await sql.rows(rowShape({ id: 'uuid' }), 'SELECT id FROM organizations WHERE id = ANY ($1::uuid[]) ORDER BY id', [[first, second]]);
      return rows.length;
    });
    expect(seen).toBe(2);
    expect(sql.inTransaction).toBe(false);
    expect(await exists(first)).toBe(true);
    expect(await exists(second)).toBe(true);
  });

  it('rolls back every statement of the work when it throws', async () => {
    const id = randomUUID();
    await expect(
      sql.transaction(async () => {
        await insertOrganization(id);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await exists(id)).toBe(false);
  });

  it('joins a transaction opened inside another: one rollback undoes both', async () => {
    const outer = randomUUID();
    const inner = randomUUID();
    await expect(
      sql.transaction(async () => {
        await insertOrganization(outer);
        await sql.transaction(() => insertOrganization(inner));
        throw new Error('undo both');
      }),
    ).rejects.toThrow('undo both');
    expect(await exists(outer)).toBe(false);
    expect(await exists(inner)).toBe(false);
  });

  // PostgreSQL only: on the embedded database (one connection) a query outside an open transaction
  // waits for it, which is exactly why nothing may run outside it.
  (embeddedDatabase() ? it.skip : it)('keeps other work out: a query started outside does not join an open transaction', async () => {
    const inside = randomUUID();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const insertedSignal = new Promise<void>((resolve) => (inserted = resolve));
    const transaction = sql.transaction(async () => {
      await insertOrganization(inside);
      inserted();
      await held;
      throw new Error('rolled back');
    });
    await insertedSignal;
    // Same Sql, called from outside the work: its own connection, which cannot see the uncommitted row.
    expect(await sql.exists('SELECT 1 FROM organizations WHERE id = $1', [inside])).toBe(false);
    release();
    await expect(transaction).rejects.toThrow('rolled back');
    expect(await exists(inside)).toBe(false);
  });
});
