import { Sql } from '../database/sql.js';

/** SQL of the places import that is not a twin's (the twins themselves: TwinsRepository.upsertPlaces). */
export class PlacesRepository {
  constructor(private readonly sql: Sql) {}

  async organizationExists(organizationId: string): Promise<boolean> {
    return this.sql.exists(`SELECT 1 FROM organizations WHERE id = $1`, [organizationId]);
  }
}
