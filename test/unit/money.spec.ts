import { canonicalPrice, moneyToJson } from '../../src/common/money';

describe('prices as exact decimals', () => {
  it.each([
    [0, '0.00'],
    ['0', '0.00'],
    [0.1, '0.10'],
    ['0.1', '0.10'],
    ['0.10', '0.10'],
    [12.5, '12.50'],
    ['007.05', '7.05'],
    [' 3 ', '3.00'],
    ['9999999999.99', '9999999999.99'],
  ])('%p → %p', (input, expected) => {
    expect(canonicalPrice(input)).toBe(expected);
  });

  it.each([[-1], ['-0.01'], ['1.234'], [0.001], ['1e3'], [1e21], [Number.NaN], [Infinity], ['12345678901'], ['.5'], ['5.'], [''], [null], [true], [{}]])(
    'refuses %p',
    (input) => {
      expect(canonicalPrice(input)).toBeUndefined();
    },
  );

  it('becomes a JSON number only at the edge', () => {
    expect(moneyToJson('0.30')).toBe(0.3);
    expect(JSON.stringify({ revenue: moneyToJson('0.30') })).toBe('{"revenue":0.3}');
    expect(moneyToJson(null)).toBe(0);
  });
});
