import pg from 'pg';

/** How long opening a connection may take: a database that is down or unreachable answers 503 within a second. */
export const CONNECT_TIMEOUT_MS = 1000;

/**
 * pg's Client with its connection attempt bounded by CONNECT_TIMEOUT_MS. pg-pool hands its own
 * `connectionTimeoutMillis` (how long a query waits for a free connection) to every Client it opens;
 * this keeps the two apart, so a busy pool is waited for while an unreachable database still fails fast.
 */
export class ConnectBoundedClient extends pg.Client {
  constructor(config: pg.ClientConfig = {}) {
    super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  }
}
