import { Injectable } from '@nestjs/common';
import { Sql } from '../database/sql.js';
import { rowShape } from '../database/row-shape.js';
import type { TwinTenant } from '../common/auth/tenant.js';

const TOTAL = rowShape({ total: 'numeric' });

/**
 * SQL reading the revenue ledger. Amounts stay `numeric` and are summed in SQL. Entries are written by
 * the embark statement (QuestsRepository.embark), in the same statement as the copy they pay for.
 */
@Injectable()
export class RevenueRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * The exact sum (a decimal string) of the revenue entries of the quests the acting twin created:
   * each entry records that twin (`twin_id`, the quest's creator) when it is written, so no join to
   * quests is needed (revenue_entries_twin_idx). The twin guard has tied the twin to the organization;
   * the entry's `organization_id` (the creator's) is compared too, so on Citus the sum reads one shard.
   */
  async totalForTwin(tenant: TwinTenant): Promise<string> {
    return this.sql.value(
      TOTAL,
      `SELECT coalesce(sum(r.amount), 0)::text AS total FROM revenue_entries r WHERE r.twin_id = $1 AND r.organization_id = $2`,
      [tenant.twin.id, tenant.organization.id],
    );
  }
}
