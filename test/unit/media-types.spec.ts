import { ATOMIC_MEDIA_TYPE, exactMediaType } from '../../src/common/json-api/resource';

describe('exactMediaType: the label of an answer as the handler set it', () => {
  it("takes back the charset Fastify appends to JSON labels", () => {
    expect(exactMediaType('application/vnd.api+json; charset=utf-8')).toBe('application/vnd.api+json');
    expect(exactMediaType('application/geo+json; charset=utf-8')).toBe('application/geo+json');
    expect(exactMediaType('application/json; charset=utf-8')).toBe('application/json');
    expect(exactMediaType(`${ATOMIC_MEDIA_TYPE}; charset=utf-8`)).toBe(ATOMIC_MEDIA_TYPE);
  });

  it('leaves exact labels, text types and other media types alone', () => {
    for (const label of ['application/vnd.api+json', 'application/geo+json', ATOMIC_MEDIA_TYPE, 'text/event-stream; charset=utf-8', 'text/html; charset=utf-8', 'image/png', 'application/vnd.mapbox-vector-tile']) {
      expect(exactMediaType(label)).toBeUndefined();
    }
    expect(exactMediaType(undefined)).toBeUndefined();
    expect(exactMediaType(['application/json; charset=utf-8'])).toBeUndefined();
  });
});
