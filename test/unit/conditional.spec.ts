import { ApiError } from '../../src/common/json-api/api-error';
import { bodyEtag, codedEtag, ifNoneMatchHits, readIfMatch, versionEtag } from '../../src/common/http/conditional';

describe('If-None-Match', () => {
  const etag = '"abc"';
  it.each([['"abc"'], ['W/"abc"'], ['"x", "abc"'], ['"x",W/"abc"'], ['*'], [['"x"', '"abc"']], ['"abc;br"'], ['"abc;gzip"']])('%p matches', (header) => {
    expect(ifNoneMatchHits(header, etag)).toBe(true);
    expect(ifNoneMatchHits(header, codedEtag(etag, 'br'))).toBe(true);
  });
  it.each([[undefined], ['"abcd"'], ['abc'], ['"x"'], [''], ['"abc+v"']])('%p does not match', (header) => {
    expect(ifNoneMatchHits(header, etag)).toBe(false);
  });
});

describe('If-Match', () => {
  it('names versions with strong tags only, any representation and coding of them', () => {
    expect(readIfMatch(undefined)).toBeUndefined();
    expect(readIfMatch('*')).toEqual({ any: true });
    expect(readIfMatch(`${versionEtag('17.2', 'abc')}, W/"18.0", "19.1;gzip"`)).toEqual({ any: false, versions: ['17.2', '19.1'] });
  });

  it.each([['abc'], [''], ['"a" "b"'], ['*, "a"']])('%p is a 400 naming the header', (header) => {
    try {
      readIfMatch(header);
      throw new Error('accepted');
    } catch (error) {
      expect((error as ApiError).source).toEqual({ header: 'If-Match' });
    }
  });
});

describe('entity tags', () => {
  it('are strong, quoted, and differ with the body, the variant and the coding', () => {
    expect(bodyEtag('a')).toMatch(/^"h[\w-]{27}"$/);
    expect(bodyEtag('a')).not.toBe(bodyEtag('b'));
    expect(versionEtag('1.0')).toBe('"1.0"');
    expect(versionEtag('1.0', 'x')).toBe('"1.0+x"');
    expect(codedEtag('"1.0"', 'br')).toBe('"1.0;br"');
  });
});
