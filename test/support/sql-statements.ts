import { Sql } from '../../src/database/sql';

/**
 * Records the SQL a repository call really sends: `Sql.query` is wrapped, not replaced, so the
 * statements run against the test database as usual. For the committed-SQL snapshots of the
 * repository tests.
 */
export function recordStatements(sql: Sql) {
  const sent: string[] = [];
  const spy = jest.spyOn(sql, 'query').mockImplementation(function (this: Sql, text: string, parameters?: unknown[]) {
    sent.push(text);
    return Sql.prototype.query.call(this, text, parameters);
  });
  return {
    /** The one statement `run` sends. */
    async statement(run: () => Promise<unknown>): Promise<string> {
      sent.length = 0;
      await run();
      expect(sent).toHaveLength(1);
      return sent[0];
    },
    restore: () => spy.mockRestore(),
  };
}
