import { UUID_V7, uuidv7, uuidv7Time } from '../../src/events/uuidv7';

describe('uuidv7', () => {
  it('has the version 7 and RFC 9562 variant bits in canonical lowercase form', () => {
    for (let i = 0; i < 1000; i++) expect(uuidv7()).toMatch(UUID_V7);
  });

  it('carries the millisecond timestamp in its first 48 bits', () => {
    const now = Date.now() + 10_000; // later than any id made so far (ids never go backwards)
    const id = uuidv7(now);
    expect(uuidv7Time(id)).toBe(now);
    expect(id.slice(0, 13).replace('-', '')).toBe(now.toString(16).padStart(12, '0'));
  });

  it('is strictly increasing within one millisecond, also across the counter overflow', () => {
    const now = Date.now() + 60_000;
    const ids = Array.from({ length: 10_000 }, () => uuidv7(now));
    for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1]).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // 10,000 ids do not fit in one 12-bit counter: the timestamp moved on instead of wrapping.
    expect(uuidv7Time(ids[ids.length - 1])).toBeGreaterThan(now);
  });

  it('never goes backwards when the clock does', () => {
    const later = Date.now() + 120_000;
    const first = uuidv7(later);
    const second = uuidv7(later - 5_000);
    expect(second > first).toBe(true);
    expect(uuidv7Time(second)).toBeGreaterThanOrEqual(later);
  });

  it('sorts by time across milliseconds', () => {
    const base = Date.now() + 180_000;
    const a = uuidv7(base);
    const b = uuidv7(base + 1);
    const c = uuidv7(base + 1000);
    expect([c, a, b].sort()).toEqual([a, b, c]);
  });

  it('varies in its random bits', () => {
    const ids = Array.from({ length: 100 }, () => uuidv7().slice(19));
    expect(new Set(ids).size).toBe(100);
  });
});
