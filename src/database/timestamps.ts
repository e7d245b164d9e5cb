import { types } from 'pg';

/**
 * PostgreSQL keeps microseconds; JavaScript's Date keeps milliseconds. Timestamps therefore travel
 * through the service as ISO 8601 strings (`2026-11-21T19:26:03.123456Z`) and never as Date objects.
 */
const PG_TIMESTAMP = /^(\d{4,})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?:([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?)?( BC)?$/;

/** What PostgreSQL sends for a timestamptz in a UTC session (the service's): no arithmetic needed. */
const PG_UTC_TIMESTAMP = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00$/;

/** Converts PostgreSQL's text form of a timestamp (any session time zone) to UTC ISO 8601 with microseconds. */
export function pgTimestampToIso(text: string): string {
  // Every row of every write answer passes through here: the common form is rewritten, not computed.
  const plain = PG_UTC_TIMESTAMP.exec(text);
  if (plain) return `${plain[1]}T${plain[2]}.${(plain[3] ?? '').padEnd(6, '0')}Z`;
  if (text === 'infinity' || text === '-infinity') return text;
  const match = PG_TIMESTAMP.exec(text);
  if (!match) throw new Error(`Unrecognised timestamp from PostgreSQL: ${text}`);
  const [, year, month, day, hour, minute, second, fraction = '', sign, offH = '0', offM = '0', offS = '0'] = match;
  const offsetSeconds = sign ? (sign === '-' ? -1 : 1) * (Number(offH) * 3600 + Number(offM) * 60 + Number(offS)) : 0;
  // Not Date.UTC(year, …): it reads years 0–99 as 1900–1999.
  const local = new Date(0);
  local.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  local.setUTCHours(Number(hour), Number(minute), Number(second), 0);
  const wholeSeconds = local.getTime() / 1000 - offsetSeconds;
  const utc = new Date(wholeSeconds * 1000);
  const iso = utc.toISOString(); // YYYY-MM-DDTHH:MM:SS.000Z
  return `${iso.slice(0, 19)}.${fraction.padEnd(6, '0')}Z`;
}

let installed = false;

/**
 * Teaches the `pg` driver how this service wants column values: timestamps as microsecond ISO strings,
 * bigint counts as numbers (counts stay far below 2^53), numeric (money) left as exact strings.
 */
export function installPgTypeParsers(): void {
  if (installed) return;
  installed = true;
  types.setTypeParser(types.builtins.TIMESTAMPTZ, pgTimestampToIso);
  types.setTypeParser(types.builtins.TIMESTAMP, pgTimestampToIso);
  types.setTypeParser(types.builtins.INT8, (value) => Number(value));
}

/**
 * SQL for a timestamp column as the service writes it (pgTimestampToIso's output): UTC, ISO 8601,
 * six fraction digits, for documents PostgreSQL builds as JSON.
 */
export const isoTimestampSql = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** A timestamp column as its microseconds since the epoch, text: exact, for versions (entity tags). */
export const microsSql = (column: string): string => `(extract(epoch FROM ${column}) * 1000000)::bigint::text`;
