/**
 * Money is an exact decimal everywhere but on the wire: `numeric` in SQL (pg hands it over as a
 * string), canonical strings in the service, a JSON number only when a response is built.
 */

/** Largest price `numeric(12,2)` holds. */
export const MAX_PRICE = '9999999999.99';

const DECIMAL = /^(\d{1,10})(?:\.(\d{1,2}))?$/;

/**
 * A price from a request (a JSON number or a decimal string, ≥ 0, at most 2 decimals) as the
 * canonical string PostgreSQL returns for `numeric(12,2)` (e.g. `0.1` → `"0.10"`), or undefined
 * when it is not one.
 */
export function canonicalPrice(value: unknown): string | undefined {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined;
    text = String(value); // shortest round-trip form: 0.1 → "0.1", 1e21 → "1e+21" (refused below)
  } else if (typeof value === 'string') {
    text = value.trim();
  } else {
    return undefined;
  }
  const match = DECIMAL.exec(text);
  if (!match) return undefined;
  return `${BigInt(match[1]).toString()}.${(match[2] ?? '').padEnd(2, '0')}`;
}

/** An exact decimal string as a JSON number, at the edge. */
export function moneyToJson(value: string | null | undefined): number {
  return value === null || value === undefined ? 0 : Number(value);
}
