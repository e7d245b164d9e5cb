/**
 * A PostgreSQL array literal of finite numbers and nulls (`{1.5,NULL,2}`), for a `$n::float8[]` or
 * `$n::int4[]` parameter. pg serializes an array by quoting and escaping every element (two regular
 * expressions each): 1.5 ms of Node for the arrays of a 1,000-position batch, where joining the numbers
 * takes ~0.2. A finite number's shortest form (`String`) is valid input for both types.
 */
export function numberArrayLiteral(values: readonly (number | null)[]): string {
  let text = '{';
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value !== null && !Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
    text += (i === 0 ? '' : ',') + (value === null ? 'NULL' : String(value));
  }
  return `${text}}`;
}
