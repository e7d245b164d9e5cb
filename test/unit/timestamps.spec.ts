import fc from 'fast-check';
import { pgTimestampToIso } from '../../src/database/timestamps';

describe('pgTimestampToIso', () => {
  it('keeps microseconds', () => {
    expect(pgTimestampToIso('2026-11-21 19:26:03.123456+00')).toBe('2026-11-21T19:26:03.123456Z');
  });
  it('pads shorter fractions and adds a missing one', () => {
    expect(pgTimestampToIso('2026-11-21 19:26:03.1+00')).toBe('2026-11-21T19:26:03.100000Z');
    expect(pgTimestampToIso('2026-11-21 19:26:03+00')).toBe('2026-11-21T19:26:03.000000Z');
  });
  it('converts other session time zones to UTC', () => {
    expect(pgTimestampToIso('2026-11-21 20:26:03.000001+01')).toBe('2026-11-21T19:26:03.000001Z');
    expect(pgTimestampToIso('2026-01-01 00:15:00.5-05:30')).toBe('2026-01-01T05:45:00.500000Z');
  });
  it('reads every UTC timestamp as its instant, to the microsecond (the fast path and the general one agree)', () => {
    const pad = (n: number, width = 2) => String(n).padStart(width, '0');
    fc.assert(
      fc.property(fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }), fc.integer({ min: 0, max: 999 }), (date, micros) => {
        const fraction = `${pad(date.getUTCMilliseconds(), 3)}${pad(micros, 3)}`.replace(/0+$/, '');
        const day = `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
        const time = `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
        const expected = `${date.toISOString().slice(0, 19)}.${pad(date.getUTCMilliseconds(), 3)}${pad(micros, 3)}Z`;
        // As PostgreSQL prints it in UTC, and the same instant one hour east.
        expect(pgTimestampToIso(`${day} ${time}${fraction ? `.${fraction}` : ''}+00`)).toBe(expected);
        const east = new Date(date.getTime() + 3_600_000);
        const eastText = `${pad(east.getUTCFullYear(), 4)}-${pad(east.getUTCMonth() + 1)}-${pad(east.getUTCDate())} ${pad(east.getUTCHours())}:${pad(east.getUTCMinutes())}:${pad(east.getUTCSeconds())}`;
        if (east.getUTCFullYear() <= 9999) expect(pgTimestampToIso(`${eastText}${fraction ? `.${fraction}` : ''}+01`)).toBe(expected);
      }),
    );
  });
  it('refuses what it does not understand', () => {
    expect(() => pgTimestampToIso('yesterday')).toThrow();
  });
});
