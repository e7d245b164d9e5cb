/** What a database failure may carry, on pg's error or on what wraps it. */
export type DriverFailure = { code?: unknown; constraint?: unknown; message?: unknown; driverError?: unknown; errors?: unknown };

/**
 * Whether `test` holds for the error or for what it wraps: TypeORM's QueryFailedError keeps pg's error
 * as `driverError`, and a failed connect to several addresses (::1 and 127.0.0.1) is an AggregateError.
 * The one walk every check of a database error's SQLSTATE or message goes through.
 */
export function anyCause(error: unknown, test: (candidate: DriverFailure) => boolean): boolean {
  if (!error || typeof error !== 'object') return false;
  const candidate = error as DriverFailure;
  if (test(candidate)) return true;
  if (candidate.driverError && candidate.driverError !== error) return anyCause(candidate.driverError, test);
  if (Array.isArray(candidate.errors)) return candidate.errors.some((inner) => anyCause(inner, test));
  return false;
}
