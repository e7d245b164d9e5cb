import { DatabaseError, type Pool, type PoolClient, type QueryResult } from 'pg';
import { DataSource, QueryFailedError, type QueryRunner } from 'typeorm';

/**
 * `dataSource.query(sql, params)` outside a transaction, straight on the pg pool TypeORM owns.
 *
 * TypeORM runs each such call through a fresh QueryRunner (pool checkout with error listeners, logger
 * and subscriber broadcasts, a QueryResult object): measured on the twin detail route that was about a
 * third of the service's per-request overhead over plain `pg` (issue 6). Repositories call
 * `dataSource.query` on every request, so this is where it is removed, once, without changing them.
 *
 * Same contract as TypeORM's PostgresQueryRunner.query: the rows (for UPDATE and DELETE
 * `[rows, rowCount]`); a failure of the statement (anything `client.query` rejects with) becomes a
 * QueryFailedError wrapping the driver error; a failure to get a connection is thrown as it comes.
 * Calls with a query runner (transactions, `manager.query` inside them) keep TypeORM's path.
 */
export function installDirectQueries(dataSource: DataSource): void {
  const pool = (dataSource.driver as unknown as { master?: Pool }).master;
  if (!pool || typeof pool.connect !== 'function') return;
  const viaTypeOrm = dataSource.query.bind(dataSource);

  const direct = async (query: string, parameters?: unknown[], queryRunner?: QueryRunner): Promise<unknown> => {
    if (queryRunner || (parameters !== undefined && !Array.isArray(parameters))) return viaTypeOrm(query, parameters, queryRunner);
    const client = await pool.connect();
    let result: QueryResult;
    // A connection that fails while checked out emits 'error'; without a listener that would crash the process.
    let broken: Error | undefined;
    const onError = (error: Error) => (broken = error);
    client.on('error', onError);
    try {
      result = await client.query(query, parameters);
    } catch (error) {
      release(client, onError, broken ?? (error instanceof DatabaseError ? undefined : (error as Error)));
      throw new QueryFailedError(query, parameters, error as Error);
    }
    release(client, onError, broken);
    switch (result.command) {
      case 'DELETE':
      case 'UPDATE':
        return [result.rows, result.rowCount];
      default:
        return result.rows;
    }
  };
  dataSource.query = direct as DataSource['query'];
}

/** Back to the pool; a connection that failed (not a statement the database refused) is discarded. */
function release(client: PoolClient, onError: (error: Error) => void, failure: Error | undefined): void {
  client.removeListener('error', onError);
  client.release(failure);
}
