import fc from 'fast-check';
import { ApiError, invalidParameter } from '../../src/common/json-api/api-error';

/** Where @nestjs/swagger keeps a route's parameters. */
const API_PARAMETERS = 'swagger/apiParameters';
import { declareQuery, NO_QUERY_PARAMETERS, param } from '../../src/common/json-api/query';
import { ApiQueryParameters } from '../../src/common/openapi/docs';

const EXAMPLE = declareQuery(
  { flag: param.boolean('A flag.'), id: param.uuid('An id.'), tags: param.list('Tags.', 'a,b'), near: param.number(0, 10)('Within.') },
  {
    paginated: true,
    check: (values) => {
      if (values.near !== undefined && !values.id) throw invalidParameter('near', 'near needs id.');
    },
  },
);

const sourceOf = (read: () => unknown): unknown => {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    return (error as ApiError).source;
  }
  throw new Error('accepted');
};

describe('query declarations', () => {
  it('reads each given parameter to its type, and the page', () => {
    expect(EXAMPLE.read({ flag: 'false', id: 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', tags: 'x, y', page_number: '2' })).toEqual({
      flag: false,
      id: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
      tags: ['x', 'y'],
      page: { number: 2 },
      fields: {},
      include: new Set(),
    });
    expect(EXAMPLE.transform(undefined)).toEqual({ page: {}, fields: {}, include: new Set() });
  });

  it('refuses a malformed value, a repeated name and a combination the check forbids, naming the parameter', () => {
    expect(sourceOf(() => EXAMPLE.read({ flag: 'maybe' }))).toEqual({ parameter: 'flag' });
    expect(sourceOf(() => EXAMPLE.read({ id: ['a', 'b'] }))).toEqual({ parameter: 'id' });
    expect(sourceOf(() => EXAMPLE.read({ near: '3' }))).toEqual({ parameter: 'near' });
    expect(sourceOf(() => EXAMPLE.read({ page_size: '0' }))).toEqual({ parameter: 'page_size' });
    expect(sourceOf(() => NO_QUERY_PARAMETERS.read({ page_number: '1' }))).toEqual({ parameter: 'page_number' });
  });

  it('refuses any undeclared name, whatever it is (Object.prototype names included)', () => {
    const declared = new Set(['flag', 'id', 'tags', 'near', 'page_number', 'page_size']);
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ minLength: 1 }), fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty')).filter((name) => !declared.has(name)),
        fc.string(),
        (name, value) => {
          const query = JSON.parse(JSON.stringify({ [name]: value })) as Record<string, unknown>;
          if (!Object.prototype.hasOwnProperty.call(query, name)) return;
          expect(sourceOf(() => EXAMPLE.read(query))).toEqual({ parameter: name });
        },
      ),
    );
  });

  it('documents every declared parameter, and the page parameters of a paginated route, in OpenAPI', () => {
    class Controller {
      list() {}
    }
    const descriptor = Object.getOwnPropertyDescriptor(Controller.prototype, 'list')!;
    ApiQueryParameters(EXAMPLE)(Controller.prototype, 'list', descriptor);
    const parameters = Reflect.getMetadata(API_PARAMETERS, descriptor.value) as { name: string; in: string; required: boolean; schema: unknown; description?: string }[];
    expect(parameters.map((p) => p.name).sort()).toEqual(['flag', 'id', 'near', 'page_number', 'page_size', 'tags']);
    expect(parameters.every((p) => p.in === 'query' && p.required === false)).toBe(true);
    expect(parameters.find((p) => p.name === 'near')).toMatchObject({ schema: { type: 'number', minimum: 0, maximum: 10 }, description: 'Within.' });
    expect(parameters.find((p) => p.name === 'id')).toMatchObject({ schema: { type: 'string', format: 'uuid' } });
  });
});
