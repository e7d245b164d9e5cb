import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { TwinTenant } from '../common/auth/tenant.js';

export interface NewRevenueEntry {
  questId: string;
  /** The receiving twin: the quest's creator. */
  twinId: string;
  embarkingTwinId: string;
  copyId: string;
  /** Exact decimal string. */
  amount: string;
}

/** SQL for the revenue ledger. Amounts stay `numeric` and are summed in SQL. */
@Injectable()
export class RevenueRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(entry: NewRevenueEntry, manager: EntityManager): Promise<void> {
    await manager.query(
      `INSERT INTO revenue_entries (quest_id, twin_id, embarking_twin_id, copy_id, amount) VALUES ($1, $2, $3, $4, $5::numeric)`,
      [entry.questId, entry.twinId, entry.embarkingTwinId, entry.copyId, entry.amount],
    );
  }

  /**
   * The exact sum (a decimal string) of the revenue entries of the quests the acting twin created:
   * each entry records that twin (`twin_id`, the quest's creator) when it is written, so no join to
   * quests is needed (revenue_entries_twin_idx). The twin guard has tied the twin to the organization.
   */
  async totalForTwin(tenant: TwinTenant): Promise<string> {
    const rows: { total: string }[] = await this.dataSource.query(
      `SELECT coalesce(sum(r.amount), 0)::text AS total FROM revenue_entries r WHERE r.twin_id = $1`,
      [tenant.twin.id],
    );
    return rows[0].total;
  }
}
