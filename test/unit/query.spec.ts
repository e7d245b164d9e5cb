import { isCalendarTimestamp } from '../../src/common/json-api/query';

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
