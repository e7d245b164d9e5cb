import { randomBytes } from 'node:crypto';
import type { Sql } from './sql.js';
import { tableShape } from './row-shape.js';
import { serviceKeys } from './schema/index.js';

const SECRET = tableShape(serviceKeys, ['secret']);

/**
 * The secret named `name` in service_keys, made (32 random bytes) by the first instance that needs it;
 * instances starting together agree on one (the insert that loses does nothing, and all read the winner).
 */
export async function serviceKey(sql: Sql, name: string): Promise<Buffer> {
  await sql.run(`INSERT INTO service_keys (name, secret) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, [name, randomBytes(32)]);
  return sql.value(SECRET, `SELECT secret FROM service_keys WHERE name = $1`, [name]);
}
