import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

export interface NewTwin {
  organizationId: string;
  ownerAccountId: string | null;
  name: string;
  description?: string;
  personal?: boolean;
}

/** SQL for twins. */
@Injectable()
export class TwinsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insertOwned(manager: EntityManager = this.dataSource.manager, twin: NewTwin): Promise<{ id: string }> {
    const rows: { id: string }[] = await manager.query(
      `INSERT INTO twins (organization_id, owner_account_id, name, description, personal)
       VALUES ($1, $2, $3, $4, $5) RETURNING id`,
      [twin.organizationId, twin.ownerAccountId, twin.name, twin.description ?? '', twin.personal ?? false],
    );
    return rows[0];
  }
}
