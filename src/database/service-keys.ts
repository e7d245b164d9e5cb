import { randomBytes } from 'node:crypto';
import type { Sql } from './sql.js';

/**
 * The secret named `name` in service_keys, made (32 random bytes) by the first instance that needs it;
 * instances starting together agree on one (the insert that loses does nothing, and all read the winner).
 */
export async function serviceKey(sql: Sql, name: string): Promise<Buffer> {
  await sql.query(`INSERT INTO service_keys (name, secret) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, [name, randomBytes(32)]);
  const rows: { secret: Buffer }[] = await sql.query(`SELECT secret FROM service_keys WHERE name = $1`, [name]);
  return rows[0].secret;
}
