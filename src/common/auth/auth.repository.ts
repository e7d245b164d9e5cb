import { Injectable } from '@nestjs/common';
import { Sql } from '../../database/sql.js';
import { rowShape } from '../../database/row-shape.js';

export interface ResolvedCredentials {
  tokenId: string;
  /** When the token expires (ISO 8601), or null. */
  expires: string | null;
  account: { id: string; name: string };
  organization?: { id: string; name: string };
  twin?: { id: string };
}

const CREDENTIALS = rowShape({
  token_id: 'uuid',
  expires: 'timestamptz?',
  account_id: 'uuid',
  account_name: 'text',
  organization_id: 'uuid?',
  organization_name: 'text?',
  twin_id: 'uuid?',
});

/**
 * The one place that knows the tenant: token, membership and acting twin are resolved in a single
 * round trip (cached in front by credentials.ts). The lookup is by SHA-256 digest, so how long it takes tells nothing about the secret.
 */
@Injectable()
export class AuthRepository {
  constructor(private readonly sql: Sql) {}

  /** `tokenDigest`: the SHA-256 of the token (tokens.ts `hashToken`). */
  async resolve(tokenDigest: Buffer, organizationId: string | undefined, twinId: string | undefined): Promise<ResolvedCredentials | undefined> {
    const row = await this.sql.first(
      CREDENTIALS,
      `SELECT t.id AS token_id, t.expires, a.id AS account_id, a.name AS account_name,
              o.id AS organization_id, o.name AS organization_name, tw.id AS twin_id
         FROM access_tokens t
         JOIN accounts a ON a.id = t.account_id
         LEFT JOIN memberships m ON m.account_id = t.account_id AND m.organization_id = $2::uuid
         LEFT JOIN organizations o ON o.id = m.organization_id
         LEFT JOIN twins tw ON tw.id = $3::uuid AND tw.organization_id = o.id
        WHERE t.token_hash = $1
          AND t.revoked IS NULL
          AND (t.expires IS NULL OR t.expires > now())`,
      [tokenDigest, organizationId ?? null, twinId ?? null],
    );
    if (!row) return undefined;
    return {
      tokenId: row.token_id,
      expires: row.expires,
      account: { id: row.account_id, name: row.account_name },
      organization: row.organization_id ? { id: row.organization_id, name: row.organization_name ?? '' } : undefined,
      twin: row.twin_id ? { id: row.twin_id } : undefined,
    };
  }
}
