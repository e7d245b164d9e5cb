import { HttpException } from '@nestjs/common';
import { ApiError } from '../../src/common/json-api/api-error';
import { isDatabaseUnavailable, isTransactionConflict, mapError } from '../../src/common/json-api/error-mapper';

describe('mapError', () => {
  it('passes ApiError through with its source and headers', () => {
    const mapped = mapError(new ApiError(429, 'rate_limited', 'Too many requests', 'slow down', undefined, { 'Retry-After': '3' }));
    expect(mapped.status).toBe(429);
    expect(mapped.headers).toEqual({ 'Retry-After': '3' });
    expect(mapped.body).toEqual({ errors: [{ status: '429', code: 'rate_limited', title: 'Too many requests', detail: 'slow down' }] });
  });

  it('hides internals of unexpected errors', () => {
    const mapped = mapError(new Error('relation "secret_table" does not exist'));
    expect(mapped.status).toBe(500);
    expect(JSON.stringify(mapped.body)).not.toContain('secret_table');
    expect(mapped.unexpected).toBe(true);
  });

  it('recognises an unreachable database', () => {
    expect(isDatabaseUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error('bind message supplies 1 parameters'), { code: '08P01' }))).toBe(false);
    expect(mapError(new Error('timeout exceeded when trying to connect')).status).toBe(503);
    // pg's own connect timeout; the words alone inside another message are not a database failure.
    expect(isDatabaseUnavailable(new Error('timeout expired'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('the cursor timeout expired for this export'))).toBe(false);
  });

  it('a deadlock or serialization failure (also inside a driver error) is a retryable 503, not a 500', () => {
    for (const code of ['40P01', '40001']) {
      const pgError = Object.assign(new Error('deadlock detected'), { code });
      for (const error of [pgError, Object.assign(new Error('query failed'), { driverError: pgError })]) {
        const mapped = mapError(error);
        expect(mapped.status).toBe(503);
        expect(mapped.headers).toEqual({ 'Retry-After': '1' });
        expect(mapped.body.errors[0]).toEqual(expect.objectContaining({ status: '503', code: 'transaction_conflict', title: 'Service unavailable' }));
        expect(isTransactionConflict(error)).toBe(true);
      }
    }
    expect(isTransactionConflict(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(mapError(Object.assign(new Error('duplicate key'), { code: '23505' })).status).toBe(500);
  });

  it('maps Fastify body errors wrapped by Nest', () => {
    const cause = Object.assign(new Error('Unsupported Media Type'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 });
    expect(mapError(new HttpException('Unsupported Media Type', 415, { cause })).body.errors[0].code).toBe('unsupported_media_type');
  });
});
