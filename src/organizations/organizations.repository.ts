import { Injectable } from '@nestjs/common';
import { Sql } from '../database/sql.js';
import type { PageRequest } from '../common/json-api/pagination.js';
import { organizations, select, type Row } from '../database/schema/index.js';
import { rowShape, tableShape } from '../database/row-shape.js';

export type OrganizationRow = Row<typeof organizations>;

const COLUMNS = select(organizations, 'o');
const ORGANIZATION = tableShape(organizations);
const COUNT = rowShape({ count: 'bigint' });
const ID = tableShape(organizations, ['id']);

/** SQL for organizations; every read is scoped to the calling account's memberships. */
@Injectable()
export class OrganizationsRepository {
  constructor(private readonly sql: Sql) {}

  async create(name: string): Promise<OrganizationRow> {
    const [row] = await this.sql.rows(ORGANIZATION, `INSERT INTO organizations AS o (name) VALUES ($1) RETURNING ${COLUMNS}`, [name]);
    return row;
  }

  async countForAccount(accountId: string): Promise<number> {
    return this.sql.value(COUNT, `SELECT count(*) AS count FROM memberships WHERE account_id = $1`, [accountId]);
  }

  async pageForAccount(accountId: string, page: PageRequest): Promise<OrganizationRow[]> {
    return this.sql.rows(
      ORGANIZATION,
      `SELECT ${COLUMNS}
         FROM memberships m JOIN organizations o ON o.id = m.organization_id
        WHERE m.account_id = $1
        ORDER BY o.created, o.id
        LIMIT $2 OFFSET $3`,
      [accountId, page.size, page.offset],
    );
  }

  async findForAccount(accountId: string, organizationId: string): Promise<OrganizationRow | undefined> {
    return this.sql.first(
      ORGANIZATION,
      `SELECT ${COLUMNS}
         FROM memberships m JOIN organizations o ON o.id = m.organization_id
        WHERE m.account_id = $1 AND o.id = $2`,
      [accountId, organizationId],
    );
  }

  /** Ids among `ids` that exist. */
  async existing(ids: string[]): Promise<Set<string>> {
    const rows = await this.sql.rows(ID, `SELECT id FROM organizations WHERE id = ANY($1::uuid[])`, [ids]);
    return new Set(rows.map((row) => row.id));
  }
}
