import { Sql } from '../../src/database/sql';

/**
 * Records the SQL a repository call really sends: `Sql.query` is wrapped, not replaced, so the
 * statements run against the test database as usual. For the committed-SQL snapshots of the
 * repository tests.
 */
export function recordStatements(sql: Sql) {
  const sent: { text: string; parameters: unknown[] }[] = [];
  const spy = jest.spyOn(sql, 'query').mockImplementation(function (this: Sql, text: string, parameters?: unknown[]) {
    sent.push({ text, parameters: parameters ?? [] });
    return Sql.prototype.query.call(this, text, parameters);
  });
  const only = async (run: () => Promise<unknown>) => {
    sent.length = 0;
    await run();
    expect(sent).toHaveLength(1);
    return sent[0];
  };
  return {
    /** The one statement `run` sends. */
    statement: async (run: () => Promise<unknown>): Promise<string> => (await only(run)).text,
    /** The one statement `run` sends, with its parameters (to EXPLAIN it). */
    call: only,
    restore: () => spy.mockRestore(),
  };
}
