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
  it('refuses what it does not understand', () => {
    expect(() => pgTimestampToIso('yesterday')).toThrow();
  });
});
