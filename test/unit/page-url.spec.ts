import fc from 'fast-check';
import { pageUrl } from '../../src/common/json-api/pagination';

/** What the links were made with before pageUrl: URLSearchParams changes on a fresh URL per link. */
function viaSearchParams(requestUrl: URL, parameter: string, drop: readonly string[], value: string): string {
  const url = new URL(requestUrl.href);
  for (const name of drop) url.searchParams.delete(name);
  url.searchParams.set(parameter, value);
  return url.href;
}

const PAGING = ['page_number', 'page_after', 'page_before'];
const name = fc.oneof(fc.constantFrom(...PAGING, 'page_size', 'fields[twins]', 'sort', 'in_bbox', 'q', '?', '?page_number'), fc.string({ maxLength: 8 }), fc.string({ unit: 'grapheme', maxLength: 4 }));
const text = fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: 'grapheme', maxLength: 6 }), fc.constantFrom('', '+', '%20', '%zz', '&', '=', '#', '-created', '1,2,3,4'));
/** Query strings as clients write them: some members escaped, some not, some without `=`. */
const query = fc.array(
  fc.tuple(name, text, fc.constantFrom('raw', 'escaped', 'bare')).map(([n, v, form]) =>
    form === 'bare' ? encodeURIComponent(n) : form === 'escaped' ? `${encodeURIComponent(n)}=${encodeURIComponent(v)}` : `${n.replace(/[&#=]/g, '')}=${v.replace(/[&#]/g, '')}`,
  ),
  { maxLength: 6 },
);
const requestUrl = fc
  .tuple(query, fc.constantFrom('', '?'), fc.constantFrom('', '#top', '#'))
  .map(([members, emptyQuery, hash]) => new URL(`https://api.example:8443/twins/${members.length > 0 ? `?${members.join('&')}` : emptyQuery}${hash}`));
const value = fc.oneof(fc.nat().map(String), fc.base64String().map((s) => s.replace(/\+/g, '-').replace(/\//g, '_').replace(/=/g, '') + '.sig'), text);

describe('pageUrl', () => {
  it('gives what URLSearchParams gives: page_number swapped in place', () => {
    fc.assert(fc.property(requestUrl, fc.array(value, { minLength: 1, maxLength: 4 }), (url, values) => {
      const at = pageUrl(url, 'page_number');
      for (const v of values) expect(at(v)).toBe(viaSearchParams(url, 'page_number', [], v));
    }));
  });

  it('gives what URLSearchParams gives: every paging parameter dropped, the link’s own appended', () => {
    fc.assert(fc.property(requestUrl, fc.constantFrom('page_after', 'page_before'), value, (url, parameter, v) => {
      expect(pageUrl(url, parameter, PAGING)(v)).toBe(viaSearchParams(url, parameter, PAGING, v));
    }));
  });

  it('keeps the other parameters in their order and escaping', () => {
    const url = new URL('https://api.example/twins/?page_after=abc&fields[twins]=name&sort=-created&page_number=3#x');
    expect(pageUrl(url, 'page_before', PAGING)('c.d')).toBe('https://api.example/twins/?fields%5Btwins%5D=name&sort=-created&page_before=c.d#x');
    expect(pageUrl(new URL('https://api.example/twins/?'), 'page_after', PAGING)('')).toBe('https://api.example/twins/?page_after=');
    expect(pageUrl(new URL('https://api.example/twins/?a=1&page_number=2&b=2'), 'page_number')('7')).toBe('https://api.example/twins/?a=1&page_number=7&b=2');
    // A query that starts with '?' (URLSearchParams' constructor drops one leading '?').
    expect(pageUrl(new URL('https://api.example/twins/??=1'), 'page_number')('2')).toBe('https://api.example/twins/?%3F=1&page_number=2');
  });
});
