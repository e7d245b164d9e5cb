import { Injectable, Logger } from '@nestjs/common';
import type { TwinTenant } from '../auth/tenant.js';
import { conflict, unprocessable } from '../json-api/api-error.js';
import { JsonText } from '../json-api/resource.js';
import { Sql } from '../../database/sql.js';
import { IdempotencyRepository } from './idempotency.repository.js';

/** Idempotency keys are honoured for at least this long. */
export const IDEMPOTENCY_RETENTION_HOURS = 24;
const PURGE_INTERVAL_MS = 10 * 60 * 1000;

/**
 * Writes under an `Idempotency-Key` of the acting twin (`POST /events/`, `POST /operations`, which share
 * the twin's keys). The key is claimed (INSERT … ON CONFLICT on its unique key) in the same transaction
 * as the write, so a concurrent retry waits for that transaction and then finds the key taken, and one
 * key never writes twice. A key used before with the same request (`hash`) answers the stored first
 * answer (`replayed`); with another request, a 422; a failed write rolls its claim back with it. Each
 * route answers a replay with its own status, as it answered the first time.
 */
@Injectable()
export class IdempotencyKeys {
  private readonly logger = new Logger('IdempotencyKeys');
  private lastPurge = 0;

  constructor(
    private readonly sql: Sql,
    private readonly keys: IdempotencyRepository,
  ) {}

  async run<T>(tenant: TwinTenant, key: string, hash: string, write: () => Promise<{ body: T; eventId?: string }>): Promise<{ body: T; replayed: boolean }> {
    const outcome = await this.sql.transaction(async () => {
      const owned = await this.keys.claim(tenant, key, hash, IDEMPOTENCY_RETENTION_HOURS);
      if (!owned) {
        const earlier = await this.keys.find(tenant, key);
        if (!earlier || earlier.response_body === null) throw conflict('A request with this Idempotency-Key is still in progress.', { header: 'Idempotency-Key' });
        if (earlier.request_hash !== hash) {
          throw unprocessable('This Idempotency-Key was used with a different request body.', { header: 'Idempotency-Key' }, 'idempotency_key_reused');
        }
        return { body: earlier.response_body as T, replayed: true };
      }
      const { body, eventId } = await write();
      await this.keys.complete(tenant, key, body instanceof JsonText ? body.text : JSON.stringify(body), eventId ?? null);
      return { body, replayed: false };
    });
    this.purgeNowAndThen();
    return outcome;
  }

  /** Keys past the retention are deleted at most every ten minutes per instance, off the request path. */
  private purgeNowAndThen(): void {
    const now = Date.now();
    if (now - this.lastPurge < PURGE_INTERVAL_MS) return;
    this.lastPurge = now;
    this.keys.purge(IDEMPOTENCY_RETENTION_HOURS).catch((error: Error) => this.logger.warn(`purging idempotency keys failed: ${error.message}`));
  }
}
