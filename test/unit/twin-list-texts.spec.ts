import type { Tenant } from '../../src/common/auth/tenant';
import type { Sql } from '../../src/database/sql';
import type { TwinDocument, TwinQuery } from '../../src/twins/twins.repository';

/**
 * The unfiltered list pages' statements are built once per list, order and document form and then
 * reused (TwinsRepository.countedPage). A key that left out one of those would hand one request another
 * request's statement: each variant's text, served after all the others, must be the text a fresh
 * module builds for it alone.
 */
type TwinsRepositoryModule = typeof import('../../src/twins/twins.repository');

const tenant: Tenant = {
  account: { id: '00000000-0000-4000-8000-00000000000a', name: 'a' },
  organization: { id: '00000000-0000-4000-8000-00000000000b', name: 'o' },
  tokenId: 't',
};

interface Variant {
  name: string;
  query: TwinQuery;
  document: TwinDocument;
}

const variants: Variant[] = [
  { name: 'visible, own order, list form', query: {}, document: { form: 'list' } },
  { name: 'own organization', query: { own: true }, document: { form: 'list' } },
  { name: 'sorted by name', query: { sort: [{ key: 'name', descending: false }] }, document: { form: 'list' } },
  { name: 'sorted by name, descending', query: { sort: [{ key: 'name', descending: true }] }, document: { form: 'list' } },
  { name: 'sorted by modified', query: { own: true, sort: [{ key: 'modified', descending: true }] }, document: { form: 'list' } },
  { name: 'a sparse fieldset', query: {}, document: { form: 'list', fields: { twins: new Set(['name']) } } },
  { name: 'another sparse fieldset', query: {}, document: { form: 'list', fields: { twins: new Set(['name', 'city']) } } },
  { name: 'with the organizations', query: {}, document: { form: 'list', includeOrganization: true } },
  {
    name: 'with a fieldset of the organizations',
    query: {},
    document: { form: 'list', includeOrganization: true, fields: { organizations: new Set(['name']) } },
  },
];

/** The statements `page()` runs, from a repository of the given module. */
async function textsOf(module: TwinsRepositoryModule, run: Variant[], offset = 0): Promise<string[]> {
  const texts: string[] = [];
  const sql = { rows: async (_shape: unknown, text: string) => (texts.push(text), [{ count: 0, part: null, g: null, included: null }]) } as unknown as Sql;
  const repository = new module.TwinsRepository(sql);
  for (const v of run) await repository.page(tenant, v.query, { number: 1 + offset / 20, size: 20, offset }, v.document);
  return texts;
}

const freshModule = (): TwinsRepositoryModule => {
  let module: TwinsRepositoryModule | undefined;
  jest.isolateModules(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    module = require('../../src/twins/twins.repository');
  });
  return module!;
};

describe('the unfiltered list pages’ statement texts', () => {
  it('are, for each variant, what a fresh build gives, whatever was served before', async () => {
    const alone = await Promise.all(variants.map(async (v) => (await textsOf(freshModule(), [v]))[0]));
    expect(new Set(alone).size).toBe(variants.length);

    const shared = freshModule();
    const served = await textsOf(shared, [...variants, ...[...variants].reverse()], 40);
    variants.forEach((v, i) => {
      expect({ variant: v.name, text: served[i] }).toEqual({ variant: v.name, text: alone[i] });
      expect({ variant: v.name, text: served[served.length - 1 - i] }).toEqual({ variant: v.name, text: alone[i] });
    });
  });
});
