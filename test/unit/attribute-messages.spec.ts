import 'reflect-metadata';
import { validateSync, type ValidationError } from 'class-validator';
import fc from 'fast-check';
import { ApiError } from '../../src/common/json-api/api-error';
import { AggregateApiError } from '../../src/common/json-api/error-mapper';
import { attributesInstance, ResourceBodyPipe } from '../../src/common/json-api/resource-body';
import { CreateEventAttributes } from '../../src/events/dto/event.dto';
import { CreateQuestAttributes } from '../../src/quests/dto/quest.dto';
import { CreateTwinAttributes, UpdateTwinAttributes } from '../../src/twins/dto/twin-attributes.dto';
import { declaredAttributes, dtoClasses, type Constructor } from '../support/dto-classes';

/** The errors a request document with these attributes gets, as `{pointer, detail}`. */
function problems(target: Constructor, attributes: Record<string, unknown>): { pointer?: string; detail: string }[] {
  try {
    new ResourceBodyPipe({ type: 'things', attributes: target }).transform({ data: { type: 'things', attributes } });
    return [];
  } catch (error) {
    const errors = error instanceof AggregateApiError ? error.errors : error instanceof ApiError ? [error] : [];
    if (errors.length === 0) throw error;
    return errors.map(({ source, detail }) => ({ pointer: source?.pointer, detail }));
  }
}

/** Every message class-validator has for each pointer (all the rules that failed). */
function allMessages(errors: ValidationError[], base = '/data/attributes', out = new Map<string, string[]>()): Map<string, string[]> {
  for (const error of errors) {
    const pointer = `${base}/${error.property}`;
    // An unknown member is reported as such (the pipe's wording), whatever else failed.
    if (error.constraints) out.set(pointer, error.constraints.whitelistValidation ? [`Unknown attribute "${error.property}".`] : Object.values(error.constraints));
    allMessages(error.children ?? [], pointer, out);
  }
  return out;
}

describe('one problem, one message, for every attribute of every DTO', () => {
  it.each([
    [CreateTwinAttributes, { name: 5 }, 'name must be a string'],
    [UpdateTwinAttributes, { name: 5 }, 'name must be a string'],
    [CreateEventAttributes, { name: 5, category: 'c', data: {} }, 'name must be a string'],
    [CreateQuestAttributes, { name: 5 }, 'name must be a string'],
    [CreateTwinAttributes, { name: 'x'.repeat(256) }, 'name must be shorter than or equal to 255 characters'],
    [CreateEventAttributes, { name: '', category: 'c', data: {} }, 'name should not be empty'],
    [UpdateTwinAttributes, { connections: 5 }, 'connections must be an array'],
    [UpdateTwinAttributes, { tags: [1, ''] }, 'each value in tags must be a string'],
    [UpdateTwinAttributes, { tags: 'x' }, 'tags must be an array'],
  ])('%p given %j: "%s"', (target, attributes, message) => {
    const found = problems(target as Constructor, attributes);
    const [name] = Object.keys(attributes).filter((key) => key !== 'category' && key !== 'data');
    expect(found).toEqual([{ pointer: `/data/attributes/${name}`, detail: message }]);
  });

  it.each(dtoClasses())('%s: any values give at most one problem per attribute, one of the messages of its failed rules', (_, target) => {
    const names = declaredAttributes(target);
    const value = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.string({ maxLength: 300 }), fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 3 }));
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...names), value, { minKeys: 1 }), (attributes) => {
        const found = problems(target, attributes);
        const pointers = found.map(({ pointer }) => pointer);
        expect(new Set(pointers).size).toBe(pointers.length);
        const expected = allMessages(validateSync(attributesInstance(target, JSON.parse(JSON.stringify(attributes))), { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false }));
        for (const { pointer, detail } of found) {
          const messages = expected.get(pointer!);
          // Problems the pipe finds before class-validator (a member named like Object.prototype's) have their own message.
          if (messages) expect(messages).toContain(detail);
        }
      }),
      { numRuns: 150 },
    );
  });
});
