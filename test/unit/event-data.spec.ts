import { ApiError } from '../../src/common/json-api/api-error';
import { canonicalJson, MAX_EVENT_DATA_BYTES, requestHash, serializedSize } from '../../src/events/event-data';
import { readIdempotencyKey } from '../../src/common/http/idempotency-key';

describe('event data size', () => {
  it('counts UTF-8 bytes of compact JSON', () => {
    expect(serializedSize({ a: 'é' })).toBe(Buffer.byteLength('{"a":"é"}'));
    expect(MAX_EVENT_DATA_BYTES).toBe(65536);
  });
});

describe('idempotency request hash', () => {
  it('ignores key order at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}');
    const one = requestHash({ name: 'n', category: 'c', data: { x: 1, y: 2 } });
    const two = requestHash({ category: 'c', name: 'n', data: { y: 2, x: 1 } } as never);
    expect(one).toBe(two);
    expect(one).toMatch(/^[0-9a-f]{64}$/);
  });

  it('differs when any attribute differs', () => {
    const base = { name: 'n', category: 'c', data: { x: 1 } };
    expect(requestHash(base)).not.toBe(requestHash({ ...base, name: 'm' }));
    expect(requestHash(base)).not.toBe(requestHash({ ...base, data: { x: 2 } }));
    expect(requestHash(base)).not.toBe(requestHash({ ...base, data: { x: '1' } }));
  });
});

describe('Idempotency-Key header', () => {
  it('is optional', () => expect(readIdempotencyKey(undefined)).toBeUndefined());

  it('accepts 1 to 255 printable ASCII characters', () => {
    expect(readIdempotencyKey('a')).toBe('a');
    expect(readIdempotencyKey(' key-1 ')).toBe('key-1');
    expect(readIdempotencyKey('x'.repeat(255))).toHaveLength(255);
    expect(readIdempotencyKey('order 17/#~')).toBe('order 17/#~');
  });

  it.each([[''], ['   '], ['x'.repeat(256)], ['tab\there'], ['é']])('refuses %j with 400 naming the header', (raw) => {
    try {
      readIdempotencyKey(raw);
      throw new Error('accepted');
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(400);
      expect((error as ApiError).source).toEqual({ header: 'Idempotency-Key' });
    }
  });

  it('refuses a repeated header', () => {
    expect(() => readIdempotencyKey(['a', 'b'])).toThrow(ApiError);
  });
});
