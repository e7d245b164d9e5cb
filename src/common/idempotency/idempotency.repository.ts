import { Injectable } from '@nestjs/common';
import type { TwinTenant } from '../auth/tenant.js';
import { Sql } from '../../database/sql.js';
import { idempotencyKeys, type Row } from '../../database/schema/index.js';
import { tableShape, typed, withColumns } from '../../database/row-shape.js';

/** A key's first answer: the request it was used with, and the answer's body (null while unfinished). */
export type IdempotencyRecord = Pick<Row<typeof idempotencyKeys>, 'request_hash'> & { response_body: unknown };

/** `response_body` is any JSON a key's answer had (jsonb's declared type is an object). */
const RECORD = withColumns(tableShape(idempotencyKeys, ['request_hash']), { response_body: typed<unknown>() });

/** SQL of the idempotency keys, kept per acting twin and scoped to its organization. */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Claims a key for this request, in the caller's transaction. True when this request owns it (new
   * key, or one older than the retention that is taken over). When another transaction holds the same
   * key uncommitted, PostgreSQL makes this statement wait for it: concurrent retries never both write.
   */
  async claim(tenant: TwinTenant, key: string, hash: string, retentionHours: number): Promise<boolean> {
    return this.sql.exists(
      `INSERT INTO idempotency_keys AS k (twin_id, key, organization_id, request_hash)
       VALUES ($1, $2, $3, $4)
       ON CONFLICT (twin_id, key) DO UPDATE
             SET request_hash = EXCLUDED.request_hash, organization_id = EXCLUDED.organization_id,
                 response_status = NULL, response_body = NULL, event_id = NULL, created = now()
           WHERE k.created < now() - make_interval(hours => $5)
       RETURNING k.key`,
      [tenant.twin.id, key, tenant.organization.id, hash, retentionHours],
    );
  }

  /** Keeps the key's first answer: its body's JSON text, and the event it created, if one. */
  async complete(tenant: TwinTenant, key: string, bodyJson: string, eventId: string | null): Promise<void> {
    await this.sql.run(
      `UPDATE idempotency_keys SET response_body = $3::jsonb, event_id = $4
        WHERE twin_id = $1 AND key = $2`,
      [tenant.twin.id, key, bodyJson, eventId],
    );
  }

  async find(tenant: TwinTenant, key: string): Promise<IdempotencyRecord | undefined> {
    return this.sql.first(
      RECORD,
      `SELECT request_hash, response_body FROM idempotency_keys
        WHERE twin_id = $1 AND key = $2 AND organization_id = $3`,
      [tenant.twin.id, key, tenant.organization.id],
    );
  }

  /** Deletes keys past the retention, a bounded batch at a time (not tenant data: housekeeping). */
  async purge(retentionHours: number, batch = 5000): Promise<number> {
    return this.sql.affected(
      `DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
         SELECT ctid FROM idempotency_keys WHERE created < now() - make_interval(hours => $1) LIMIT $2))`,
      [retentionHours, batch],
    );
  }
}
