import fc from 'fast-check';
import { isInstant } from '../../src/common/json-api/query';
import { booleanArrayLiteral, instantArrayLiteral, numberArrayLiteral } from '../../src/database/array-literal';

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

describe('booleanArrayLiteral', () => {
  it('writes t and f in order, {} for none', () => {
    expect(booleanArrayLiteral([true, false, true])).toBe('{t,f,t}');
    expect(booleanArrayLiteral([])).toBe('{}');
  });
});

describe('instantArrayLiteral', () => {
  it('joins instants as they are', () => {
    expect(instantArrayLiteral([])).toBe('{}');
    expect(instantArrayLiteral(['2026-11-29T10:00:00Z', '2026-11-29T10:00:00.123456+01:00', '0001-01-01T00:00:00-09:30'])).toBe(
      '{2026-11-29T10:00:00Z,2026-11-29T10:00:00.123456+01:00,0001-01-01T00:00:00-09:30}',
    );
  });

  it('refuses what would need quoting or would change the list', () => {
    for (const bad of [['2026-11-29 10:00:00Z'], ['a,b'], ['}'], ['"x"'], [''], ['2026-11-29T10:00:00Z', ''], ['NULL'], ['{}']]) expect(() => instantArrayLiteral(bad)).toThrow(RangeError);
  });

  it('takes every list of instants isInstant accepts, one element each', () => {
    const instant = fc
      .tuple(fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }), fc.stringMatching(/^(\.\d{1,6})?$/), fc.constantFrom('Z', '+01:00', '-09:30', '+14:00'))
      .map(([date, fraction, zone]) => `${date.toISOString().slice(0, 19)}${fraction}${zone}`)
      .filter(isInstant);
    fc.assert(
      fc.property(fc.array(instant, { minLength: 1 }), (values) => {
        expect(instantArrayLiteral(values).slice(1, -1).split(',')).toEqual(values);
      }),
    );
  });
});
