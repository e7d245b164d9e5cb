import { FeatureCollectionScanner, GeoJsonFormatError, ScannedFeature } from '../../src/places/feature-collection-scanner';

/** Feeds `text` in chunks of `size` bytes. */
function scan(text: string, size = 1 << 20): ScannedFeature[] {
  const bytes = Buffer.from(text, 'utf8');
  const scanner = new FeatureCollectionScanner();
  const out: ScannedFeature[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(...scanner.push(bytes.subarray(i, i + size)));
  scanner.end();
  return out;
}

const features = [
  { type: 'Feature', geometry: { type: 'Point', coordinates: [1.5, -2] }, properties: { name: 'a "quoted" \\ name ] } ,', tags: ['x', 'y'] } },
  { type: 'Feature', geometry: null, properties: { name: 'Zürich café 東京 😀', nested: [[1, [2]], { a: { b: [] } }] } },
  { type: 'Feature', id: 3, properties: { name: '\u2028 \\" \\\\' } },
];

describe('FeatureCollection scanner', () => {
  const layouts = {
    compact: JSON.stringify({ type: 'FeatureCollection', features }),
    pretty: JSON.stringify({ type: 'FeatureCollection', features }, null, 2),
    'members around features': JSON.stringify({ bbox: [0, 0, 1, 1], crs: { type: 'name', properties: { name: 'features' } }, features, type: 'FeatureCollection', name: 'x' }),
    'odd whitespace': `\uFEFF \r\n\t{ "type" :"FeatureCollection" ,\n"features"\n:\n[ ${features.map((f) => JSON.stringify(f)).join(' \n,\n ')} ]\n}\n\n`,
  };

  for (const [name, text] of Object.entries(layouts)) {
    it(`reads every feature of a ${name} file, whatever the chunk boundaries`, () => {
      for (const size of [1, 2, 3, 7, 64, 1 << 20]) {
        const out = scan(text, size);
        expect(out).toEqual(features.map((value, index) => ({ index, value })));
      }
    });
  }

  it('reports an element that is not valid JSON by its index and goes on', () => {
    const text = '{"type":"FeatureCollection","features":[{"a":1}, {"b": tru}, 42, "s", null, {"c":[1,2]}]}';
    for (const size of [1, 5, 1000]) {
      const out = scan(text, size);
      expect(out.map((f) => f.index)).toEqual([0, 1, 2, 3, 4, 5]);
      expect('error' in out[1]).toBe(true);
      expect(out.filter((f) => 'value' in f).map((f) => (f as { value: unknown }).value)).toEqual([{ a: 1 }, 42, 's', null, { c: [1, 2] }]);
    }
  });

  it('reads an empty collection', () => {
    expect(scan('{"type":"FeatureCollection","features":[]}')).toEqual([]);
  });

  it.each([
    ['', /empty/],
    ['[1,2]', /not a JSON object/],
    ['{"type":"FeatureCollection"}', /no "features"/],
    ['{"type":"Feature","features":[]}', /not "FeatureCollection"/],
    ['{"type":"FeatureCollection","features":{"a":1}}', /not an array/],
    ['{"type":"FeatureCollection","features":[{"a":1},{"b":', /truncated/],
    ['{"type":"FeatureCollection","features":[{"a":"unterminated', /truncated/],
    ['{"type":"FeatureCollection","features":[]} {}', /after the FeatureCollection/],
  ])('refuses %j', (text, message) => {
    expect(() => scan(text, 3)).toThrow(GeoJsonFormatError);
    expect(() => scan(text, 3)).toThrow(message);
  });

  it('refuses a feature spanning chunks beyond its size limit', () => {
    const scanner = new FeatureCollectionScanner(100);
    const bytes = Buffer.from(`{"type":"FeatureCollection","features":[{"name":"${'x'.repeat(200)}"}]}`);
    expect(() => {
      for (let i = 0; i < bytes.length; i += 50) scanner.push(bytes.subarray(i, i + 50));
    }).toThrow(/larger than 100 bytes/);
  });
});
