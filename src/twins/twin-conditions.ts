import { invalidHeader } from '../common/json-api/api-error.js';
import type { Tenant } from '../common/auth/tenant.js';
import type { SqlParams } from '../database/sql-params.js';
import type { TwinFilters } from './twin-filters.js';

/** The filters of TWIN_FILTER_PARAMETERS, with the acting twin `is_connection` refers to. */
export type TwinFilterValues = Pick<TwinFilters, 'is_public' | 'is_personal' | 'characteristics' | 'organization' | 'is_connection' | 'is_supplier'> & {
  /** The `X-Twin` twin whose `connections` `is_connection` refers to. */
  actingTwinId?: string;
};

/** The twin `is_connection` refers to: the `X-Twin` one, which it needs. */
export function connectionTwinId(tenant: Tenant, filters: { is_connection?: boolean }): string | undefined {
  if (filters.is_connection === undefined) return undefined;
  if (!tenant.twin) throw invalidHeader('X-Twin', 'is_connection needs "X-Twin: <TWIN_ID>": the twin whose connections are listed.');
  return tenant.twin.id;
}

/**
 * The SQL conditions of the twin filters over the twins row `alias` (the lists of the twins feature and
 * the vector tiles of the maps feature), with their values added to `p`.
 */
export function twinFilterConditions(p: SqlParams, tenant: Tenant, filters: TwinFilterValues, alias = 't'): string[] {
  const t = alias;
  const conditions: string[] = [];
  if (filters.is_public !== undefined) conditions.push(filters.is_public ? `${t}.public` : `NOT ${t}.public`);
  if (filters.is_supplier !== undefined) conditions.push(filters.is_supplier ? `cardinality(${t}.services) > 0` : `cardinality(${t}.services) = 0`);
  if (filters.is_personal !== undefined) {
    const account = p.add(tenant.account.id, '::uuid');
    conditions.push(filters.is_personal ? `${t}.owner_account_id = ${account}` : `${t}.owner_account_id IS DISTINCT FROM ${account}`);
  }
  if (filters.organization !== undefined) conditions.push(`${t}.organization_id = ${p.add(filters.organization, '::uuid')}`);
  if (filters.characteristics !== undefined) conditions.push(`${t}.characteristics @> ${p.add(filters.characteristics, '::text[]')}`);
  if (filters.is_connection !== undefined && filters.actingTwinId !== undefined) {
    // The acting twin belongs to the caller's organization (checked by the twin guard). A subquery, not
    // `= ANY (array)`: PostgreSQL hashes it once, where an array is searched element by element for every
    // row (a map tile of 15,000 twins against 200 connections).
    const connections = `SELECT k.id FROM twins c, unnest(c.connections) AS k(id) WHERE c.id = ${p.add(filters.actingTwinId, '::uuid')} AND k.id IS NOT NULL`;
    conditions.push(`${t}.id ${filters.is_connection ? 'IN' : 'NOT IN'} (${connections})`);
  }
  return conditions;
}
