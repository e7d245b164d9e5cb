import { buildEnvelope, FeaturePage } from '../../src/common/json-api/envelope';
import { Page } from '../../src/common/json-api/pagination';

const url = () => new URL('https://api.example/twins/?in_bbox=0,45,15,55&page_number=2&page_size=2');

describe('buildEnvelope', () => {
  it('a page of the map listing: the FeatureCollection text spliced in as PostgreSQL wrote it, links and meta twice', () => {
    // PostgreSQL's json_build_object writes ` : ` between key and value; the text is not parsed again.
    const features = '{"type":"FeatureCollection","features":[{"id" : "a", "type" : "Feature"}]}';
    const text = buildEnvelope(new FeaturePage(features, new Page(undefined, { number: 2, size: 2, offset: 2 }, 5)), url) as string;
    expect(text).toContain(`"results":${features}`);
    const links = {
      first: 'https://api.example/twins/?in_bbox=0%2C45%2C15%2C55&page_number=1&page_size=2',
      last: 'https://api.example/twins/?in_bbox=0%2C45%2C15%2C55&page_number=3&page_size=2',
      next: 'https://api.example/twins/?in_bbox=0%2C45%2C15%2C55&page_number=3&page_size=2',
      prev: 'https://api.example/twins/?in_bbox=0%2C45%2C15%2C55&page_number=1&page_size=2',
    };
    const meta = { pagination: { page: 2, pages: 3, count: 5 } };
    expect(JSON.parse(text)).toEqual({ links, data: { results: JSON.parse(features), meta, links }, meta });
    expect(Object.keys(JSON.parse(text))).toEqual(['links', 'data', 'meta']);
  });

  it('an empty map listing has one page and no next or previous one', () => {
    const text = buildEnvelope(new FeaturePage('{"type":"FeatureCollection","features":[]}', new Page(undefined, { number: 1, size: 1000, offset: 0 }, 0)), url) as string;
    const body = JSON.parse(text);
    expect(body.meta).toEqual({ pagination: { page: 1, pages: 1, count: 0 } });
    expect(body.data.links).toEqual(body.links);
    expect([body.links.next, body.links.prev]).toEqual([null, null]);
  });
});
