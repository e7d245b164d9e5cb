import { Injectable } from '@nestjs/common';
import type { TwinTenant } from '../common/auth/tenant.js';
import { RawBody } from '../common/json-api/envelope.js';
import { moneyToJson } from '../common/money.js';
import { RevenueRepository } from './revenue.repository.js';

@Injectable()
export class RevenueService {
  constructor(private readonly revenue: RevenueRepository) {}

  /** The contract's bare `{revenue: <number>}`: summed exactly in SQL, a JSON number only here. */
  async total(tenant: TwinTenant): Promise<RawBody<{ revenue: number }>> {
    return new RawBody({ revenue: moneyToJson(await this.revenue.totalForTwin(tenant)) });
  }
}
