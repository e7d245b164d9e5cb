import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import fc from 'fast-check';
import { attributesInstance, MAX_DOCUMENT_DEPTH, unstorableMember } from '../../src/common/json-api/resource-body';
import { declaredAttributes, DTO_MODULES, dtoClasses, dtoFiles } from '../support/dto-classes';

describe('attributesInstance', () => {
  const classes = dtoClasses();

  it('covers every DTO module and finds the DTO classes', () => {
    expect(dtoFiles().sort()).toEqual(Object.keys(DTO_MODULES).sort());
    expect(classes.map(([name]) => name)).toEqual(expect.arrayContaining(['CreateEventAttributes', 'UpdateEventAttributes', 'CreateTwinAttributes', 'UpdateTwinAttributes']));
  });

  it.each(classes)('%s: primitive attributes make the instance plainToInstance makes', (_, target) => {
    const primitive = fc.oneof(fc.string(), fc.double(), fc.integer(), fc.boolean(), fc.constant(null));
    const names = declaredAttributes(target);
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...names), primitive), (values) => {
        const fast = attributesInstance(target, { ...values });
        const reference = plainToInstance(target, { ...values }, { enableImplicitConversion: false });
        expect(Object.getPrototypeOf(fast)).toBe(target.prototype);
        expect({ ...fast }).toEqual({ ...reference });
        expect(Object.keys(fast)).toEqual(Object.keys(reference));
      }),
      { numRuns: 200 },
    );
  });

  it('objects still go through class-transformer (nested DTOs become their class)', () => {
    const [, target] = classes.find(([name]) => name === 'UpdateTwinAttributes')!;
    const instance = attributesInstance(target, { personality: { likes: ['tea'] } }) as { personality: object };
    expect(instance.personality.constructor.name).toBe('PersonalityAttributes');
  });
});

describe('unstorableMember', () => {
  const resolve = (root: unknown, pointer: string): unknown =>
    pointer === ''
      ? root
      : pointer
          .slice(1)
          .split('/')
          .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
          .reduce((value: unknown, segment) => (value as Record<string, unknown>)[segment], root);

  it('accepts any JSON of storable text within the depth', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        expect(unstorableMember(JSON.parse(JSON.stringify(value)))).toBeUndefined();
      }),
    );
  });

  it('points at the string or member name holding U+0000 or a lone surrogate, wherever it is', () => {
    const bad = fc.constantFrom('\u0000', '\ud800', '\udfff', 'a\ud83dz');
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.nat(3), fc.string({ maxLength: 4 }).filter((name) => name !== '__proto__')), { maxLength: 5 }), bad, fc.boolean(), (path, text, asName) => {
        // Put the bad text at the end of a path of objects (string steps) and arrays (number steps).
        const root: Record<string, unknown> = { data: null };
        let holder: Record<string, unknown> | unknown[] = root;
        let key: string | number = 'data';
        for (const step of path) {
          const next: Record<string, unknown> | unknown[] = typeof step === 'number' ? Array.from({ length: step + 1 }, () => 1) : {};
          (holder as Record<string | number, unknown>)[key] = next;
          holder = next;
          key = step;
        }
        if (asName) (holder as Record<string | number, unknown>)[key] = { [`x${text}`]: 1 };
        else (holder as Record<string | number, unknown>)[key] = `x${text}`;
        const found = unstorableMember(root);
        expect(found).toBeDefined();
        const target = resolve(root, found!.pointer);
        if (asName) expect(found!.detail).toMatch(/^Member names/);
        else expect(target).toBe(`x${text}`);
      }),
    );
  });

  it('points at the first value nested deeper than the limit', () => {
    let deep: unknown = 'leaf';
    for (let level = 0; level < MAX_DOCUMENT_DEPTH; level++) deep = level % 2 === 0 ? [deep] : { 'a/b~c': deep };
    expect(unstorableMember({ ok: deep })).toEqual({ pointer: expect.stringMatching(/^\/ok\//), detail: `The document is nested more than ${MAX_DOCUMENT_DEPTH} levels deep.` });
    expect(unstorableMember(deep)).toBeUndefined();
    expect(unstorableMember({ ok: deep })!.pointer.split('/')).toHaveLength(MAX_DOCUMENT_DEPTH + 1);
    expect(unstorableMember({ ok: deep })!.pointer).toContain('a~1b~0c');
  });
});
