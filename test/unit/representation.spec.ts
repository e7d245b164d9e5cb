import fc from 'fast-check';
import { ApiError } from '../../src/common/json-api/api-error';
import { CursorCodec, cursorRequest, cursorScope } from '../../src/common/json-api/cursor';
import { readRepresentation, sparseResource } from '../../src/common/json-api/representation';
import { keysetNotPast, keysetOrder, keysetPast, type KeysetKey } from '../../src/database/keyset';

const sourceOf = (work: () => unknown) => {
  try {
    work();
  } catch (error) {
    return (error as ApiError).source;
  }
  throw new Error('did not throw');
};

const OFFER = { fields: { twins: ['name', 'created', 'organization'], organizations: ['name'] }, include: ['organization'], sort: ['name', 'created'] };

describe('readRepresentation', () => {
  it('reads fieldsets, include and sort', () => {
    const read = readRepresentation({ 'fields[twins]': 'name,organization', 'fields[organizations]': '', include: 'organization', sort: '-name,created' }, OFFER);
    expect(read.fields).toEqual({ twins: new Set(['name', 'organization']), organizations: new Set() });
    expect(read.include).toEqual(new Set(['organization']));
    expect(read.sort).toEqual([
      { key: 'name', descending: true },
      { key: 'created', descending: false },
    ]);
    expect(readRepresentation({}, OFFER)).toEqual({ fields: {}, include: new Set() });
  });

  it('names the parameter of anything not offered', () => {
    expect(sourceOf(() => readRepresentation({ 'fields[twins]': 'name,size' }, OFFER))).toEqual({ parameter: 'fields[twins]' });
    expect(sourceOf(() => readRepresentation({ 'fields[quests]': 'name' }, OFFER))).toEqual({ parameter: 'fields[quests]' });
    expect(sourceOf(() => readRepresentation({ 'fields[__proto__]': 'name' }, OFFER))).toEqual({ parameter: 'fields[__proto__]' });
    expect(sourceOf(() => readRepresentation({ include: 'organization,twins' }, OFFER))).toEqual({ parameter: 'include' });
    expect(sourceOf(() => readRepresentation({ sort: 'name,-name' }, OFFER))).toEqual({ parameter: 'sort' });
    expect(sourceOf(() => readRepresentation({ sort: '' }, OFFER))).toEqual({ parameter: 'sort' });
  });
});

describe('sparseResource', () => {
  const resource = { type: 'twins', id: 'x', attributes: { name: 'a', created: 'b' }, relationships: { organization: { data: { type: 'organizations', id: 'o' } } } };

  it('keeps the named members; attributes stay, an empty relationships object goes', () => {
    expect(sparseResource(resource, { twins: new Set(['name']) })).toEqual({ type: 'twins', id: 'x', attributes: { name: 'a' } });
    expect(sparseResource(resource, { twins: new Set(['organization']) })).toEqual({ type: 'twins', id: 'x', attributes: {}, relationships: resource.relationships });
    expect(sparseResource(resource, { organizations: new Set(['name']) })).toBe(resource);
  });
});

describe('keyset SQL', () => {
  const key = (name: string, descending: boolean): KeysetKey => ({ sql: (a) => `${a}.${name}`, cast: '::text', descending });

  it('is a row comparison when every key goes one way, and expands when they do not', () => {
    expect(keysetPast([key('created', true), key('id', true)], 'e', ['$1', '$2'])).toBe('(e.created, e.id) < ($1, $2)');
    expect(keysetPast([key('created', true), key('id', true)], 'e', ['$1', '$2'], true)).toBe('(e.created, e.id) > ($1, $2)');
    expect(keysetNotPast([key('created', false), key('id', false)], 't', ['$1', '$2'])).toBe('(t.created, t.id) <= ($1, $2)');
    expect(keysetPast([key('price', true), key('name', false)], 'q', ['$1', '$2'])).toBe('((q.price < $1) OR (q.price = $1 AND q.name > $2))');
    expect(keysetOrder([key('price', true), key('name', false)], 'q', true)).toBe('q.price ASC, q.name DESC');
  });
});

describe('CursorCodec', () => {
  const codec = new CursorCodec(Buffer.alloc(32, 7));
  const limits = { defaultSize: 50, maxSize: 100 };

  it('round-trips positions within their scope only', () => {
    const scope = cursorScope('events', [{ key: 'timestamp', descending: true }]);
    const cursor = codec.encode(scope, ['2026-11-24 02:51:45.849157+00', 'abc']);
    expect(cursorRequest({ after: cursor }, limits, codec, scope)).toEqual({ direction: 'after', position: ['2026-11-24 02:51:45.849157+00', 'abc'], size: 50, scope });
    expect(cursorRequest({ before: '', size: 10 }, limits, codec, scope)).toEqual({ direction: 'before', position: null, size: 10, scope });
    expect(sourceOf(() => cursorRequest({ after: cursor }, limits, codec, 'events:timestamp'))).toEqual({ parameter: 'page_after' });
    expect(sourceOf(() => cursorRequest({ before: cursor }, limits, new CursorCodec(Buffer.alloc(32, 8)), scope))).toEqual({ parameter: 'page_before' });
    expect(sourceOf(() => cursorRequest({ after: '', size: 101 }, limits, codec, scope))).toEqual({ parameter: 'page_size' });
  });

  it('refuses any other text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        expect(sourceOf(() => codec.decode('s', 'page_after', text))).toEqual({ parameter: 'page_after' });
      }),
    );
  });
});
