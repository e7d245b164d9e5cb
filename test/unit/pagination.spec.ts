import { ApiError } from '../../src/common/json-api/api-error';
import { assertPageExists, loadPage, Page, pageCount, pageLinks, pageRequest, readPageParams, type PageLimits } from '../../src/common/json-api/pagination';

const limits = { defaultSize: 50, maxSize: 100 };
/** What a paginated route does: the declaration reads the parameters, the service applies its limits. */
const readPageRequest = (query: Record<string, unknown>, routeLimits: PageLimits) => pageRequest(readPageParams(query), routeLimits);

describe('pagination', () => {
  it('defaults to the first page of the default size', () => {
    expect(readPageRequest({}, limits)).toEqual({ number: 1, size: 50, offset: 0 });
    expect(readPageRequest({ page_number: '3', page_size: '10' }, limits)).toEqual({ number: 3, size: 10, offset: 20 });
  });

  it.each([{ page_number: '0' }, { page_number: '-1' }, { page_number: '1.5' }, { page_size: '101' }, { page_size: '' }, { page_number: ['1', '2'] }])(
    'refuses %p naming the parameter',
    (query) => {
      try {
        readPageRequest(query, limits);
        throw new Error('accepted');
      } catch (error) {
        expect(error).toBeInstanceOf(ApiError);
        expect((error as ApiError).source?.parameter).toBe(Object.keys(query)[0]);
      }
    },
  );

  it('an empty list has one page; past the last page is a 404', () => {
    expect(pageCount(0, 50)).toBe(1);
    expect(pageCount(101, 50)).toBe(3);
    expect(() => assertPageExists({ number: 1, size: 50, offset: 0 }, 0)).not.toThrow();
    expect(() => assertPageExists({ number: 2, size: 50, offset: 50 }, 50)).toThrow(expect.objectContaining({ status: 404 }));
  });

  it('links are absolute, keep other parameters and replace page_number', () => {
    const page = new Page([], { number: 2, size: 10, offset: 10 }, 35);
    const links = pageLinks(new URL('https://api.example/twins/?is_public=true&page_number=2&page_size=10'), page);
    expect(links).toEqual({
      first: 'https://api.example/twins/?is_public=true&page_number=1&page_size=10',
      last: 'https://api.example/twins/?is_public=true&page_number=4&page_size=10',
      next: 'https://api.example/twins/?is_public=true&page_number=3&page_size=10',
      prev: 'https://api.example/twins/?is_public=true&page_number=1&page_size=10',
    });
  });
});

describe('loadPage', () => {
  const request = { number: 2, size: 10, offset: 10 };

  it('counts, fetches and maps one page', async () => {
    const rows = jest.fn(async () => [1, 2]);
    const page = await loadPage(request, async () => 12, rows, (n: number) => `row ${n}`);
    expect(page.data).toEqual(['row 1', 'row 2']);
    expect(page.count).toBe(12);
    expect(page.pages).toBe(2);
    expect(rows).toHaveBeenCalledTimes(1);
  });

  it('404 past the last page without fetching rows', async () => {
    const rows = jest.fn(async () => []);
    await expect(loadPage(request, async () => 10, rows, (n: number) => n)).rejects.toEqual(expect.objectContaining({ status: 404 }));
    expect(rows).not.toHaveBeenCalled();
  });

  it('an empty list fetches nothing and is one empty page', async () => {
    const rows = jest.fn(async () => []);
    const page = await loadPage({ number: 1, size: 10, offset: 0 }, async () => 0, rows, (n: number) => n);
    expect(page.data).toEqual([]);
    expect(rows).not.toHaveBeenCalled();
  });
});
