import fc from 'fast-check';
import { numberArrayLiteral } from '../../src/database/array-literal';

describe('numberArrayLiteral', () => {
  it('writes finite numbers in their shortest form and nulls as NULL', () => {
    expect(numberArrayLiteral([])).toBe('{}');
    expect(numberArrayLiteral([1, null, -2.5, 1e-7, 5e-324, 1.7976931348623157e308, 0])).toBe('{1,NULL,-2.5,1e-7,5e-324,1.7976931348623157e+308,0}');
  });

  it('refuses what is not a finite number', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) expect(() => numberArrayLiteral([1, bad])).toThrow(RangeError);
  });

  it('gives back every number exactly when its elements are read as numbers', () => {
    fc.assert(
      fc.property(fc.array(fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: null })), (values) => {
        const literal = numberArrayLiteral(values);
        const read = literal === '{}' ? [] : literal.slice(1, -1).split(',').map((text) => (text === 'NULL' ? null : Number(text)));
        expect(read).toEqual(values.map((value) => (Object.is(value, -0) ? 0 : value)));
      }),
    );
  });
});
