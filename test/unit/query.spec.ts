import fc from 'fast-check';
import { isCalendarTimestamp, isInstant } from '../../src/common/json-api/query';

describe('isCalendarTimestamp (the since/until filters)', () => {
  it.each(['2026-11-21', '2026-11-21T19:26', '2026-11-21T19:26:03', '2026-11-21T19:26:03.123456Z', '2026-11-21T19:26:03+01:00', '2026-11-21T19:26:03-0130', '2024-02-29', '2000-02-29', '0001-01-01', '2026-12-31T23:59:59Z'])(
    'accepts %s',
    (raw) => expect(isCalendarTimestamp(raw)).toBe(true),
  );

  it.each([
    ['a day past the month', '2026-04-31'],
    ['February 30', '2026-02-30T10:00:00Z'],
    ['February 29 of a common year', '2026-02-29'],
    ['February 29 of a century year', '1900-02-29'],
    ['year 0', '0000-01-01'],
    ['month 13', '2026-13-01'],
    ['day 0', '2026-01-00'],
    ['hour 24', '2026-01-01T24:00'],
    ['minute 60', '2026-01-01T23:60'],
    ['seven fractional digits', '2026-11-21T19:26:03.1234567Z'],
    ['an offset of 16 hours', '2026-11-21T19:26:03+16:00'],
    ['free text', 'yesterday'],
  ])('refuses %s (%s)', (_what, raw) => expect(isCalendarTimestamp(raw)).toBe(false));
});

describe('isInstant (an event\'s occurred)', () => {
  it.each(['2026-11-21T18:02:41Z', '2026-11-21T18:02:41.5+01:00', '2026-11-21T18:02:41.123456-09:30', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999999Z', '2024-02-29T12:00:00+14:00'])(
    'takes %s',
    (raw) => expect(isInstant(raw)).toBe(true),
  );
  it.each([
    '2026-11-21', // a day
    '2026-11-21T18:02:41', // local time
    '2026-11-21T18:02Z', // no seconds
    '2026-11-21T18:02:41.1234567Z', // beyond microseconds
    '2026-11-21T18:02:41.Z',
    '2026-11-21T18:02:41+0100', // the offset without its colon
    '2026-11-21 18:02:41Z',
    '2025-02-29T00:00:00Z',
    '2026-11-21T24:00:00Z',
    '2026-11-21T23:60:00Z',
    '2026-11-21T23:59:60Z',
    '0000-01-01T00:00:00Z',
    '+02026-11-21T18:02:41Z',
    '2026-11-21T18:02:41Z\n',
  ])('refuses %j', (raw) => expect(isInstant(raw)).toBe(false));
});

describe('isInstant against its definition (property)', () => {
  /** The definition: isCalendarTimestamp with seconds and an explicit offset, by regular expressions. */
  const defined = (raw: string) => /T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:\d{2})$/.test(raw) && isCalendarTimestamp(raw);
  /** Mostly the valid choice (first), sometimes another. */
  const pick = (valid: string, ...others: string[]) => fc.oneof({ arbitrary: fc.constant(valid), weight: 8 }, { arbitrary: fc.constantFrom(valid, ...others), weight: 1 });
  /** A zero-padded number, mostly within `max` (a month, an hour), sometimes beyond it, or no number at all. */
  const number = (width: number, min: number, max: number) =>
    fc.oneof(
      { arbitrary: fc.integer({ min, max }), weight: 8 },
      { arbitrary: fc.integer({ min: 0, max: 10 ** width - 1 }), weight: 2 },
    ).map((n) => String(n).padStart(width, '0')).chain((text) => fc.oneof({ arbitrary: fc.constant(text), weight: 12 }, { arbitrary: fc.string({ maxLength: width + 1 }), weight: 1 }));
  /** Near-instants: each part valid or not, so every check is reached with both answers. */
  const nearInstant = fc
    .tuple(number(4, 1, 9999), pick('-', '/', ''), number(2, 1, 12), pick('-', '_'), number(2, 1, 31), pick('T', ' ', 't'), number(2, 0, 23), pick(':', ';'), number(2, 0, 59), pick(':', ''),
      number(2, 0, 59), fc.oneof(fc.constant(''), fc.stringMatching(/^\.\d{0,8}$/)),
      fc.oneof(fc.constantFrom('Z', 'z', '', '+', '-'), fc.tuple(fc.constantFrom('+', '-'), number(2, 0, 15), pick(':', ''), number(2, 0, 59)).map((parts) => parts.join(''))),
      pick('', ' ', 'Z', '\n'))
    .map((parts) => parts.join(''));

  it('accepts exactly the instants the definition does', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.oneof({ arbitrary: nearInstant, weight: 9 }, { arbitrary: fc.string({ maxLength: 40 }), weight: 1 }), (raw) => {
        expect(isInstant(raw)).toBe(defined(raw));
        if (defined(raw)) accepted++;
      }),
      { numRuns: 20_000 },
    );
    // Both answers are well represented.
    expect(accepted).toBeGreaterThan(500);
    expect(accepted).toBeLessThan(18_000);
  });
});
