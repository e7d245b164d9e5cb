import { Injectable } from '@nestjs/common';
import { Sql } from '../database/sql.js';
import { hashToken } from '../common/auth/tokens.js';
import { accessTokens, accounts, type Row } from '../database/schema/index.js';
import { tableShape } from '../database/row-shape.js';

export type AccountRow = Row<typeof accounts> & { organization_ids: string[] };

export type TokenRow = Pick<Row<typeof accessTokens>, 'id' | 'account_id' | 'created' | 'expires'>;

const ACCOUNT = tableShape(accounts, ['id', 'name', 'created', 'modified']);
const TOKEN = tableShape(accessTokens, ['id', 'account_id', 'created', 'expires']);

/** SQL for accounts, their memberships and their access tokens. */
@Injectable()
export class AccountsRepository {
  constructor(private readonly sql: Sql) {}

  async create(name: string, organizationIds: string[]): Promise<AccountRow> {
    const [account] = await this.sql.rows(ACCOUNT, `INSERT INTO accounts (name) VALUES ($1) RETURNING id, name, created, modified`, [name]);
    if (organizationIds.length > 0) {
      await this.sql.run(
        `INSERT INTO memberships (account_id, organization_id) SELECT $1, unnest($2::uuid[])`,
        [account.id, organizationIds],
      );
    }
    return { ...account, organization_ids: organizationIds };
  }

  async exists(accountId: string): Promise<boolean> {
    return this.sql.exists(`SELECT 1 FROM accounts WHERE id = $1`, [accountId]);
  }

  async createToken(accountId: string, token: string, expires: string | null): Promise<TokenRow> {
    const [row] = await this.sql.rows(
      TOKEN,
      `INSERT INTO access_tokens (account_id, token_hash, expires) VALUES ($1, $2, $3::timestamptz)
       RETURNING id, account_id, created, expires`,
      [accountId, hashToken(token), expires],
    );
    return row;
  }

  /** Marks a token revoked; true when it existed and was live. Takes effect on the next request. */
  async revokeToken(tokenId: string): Promise<boolean> {
    return (await this.sql.affected(`UPDATE access_tokens SET revoked = now() WHERE id = $1 AND revoked IS NULL`, [tokenId])) > 0;
  }
}
