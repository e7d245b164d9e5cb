import 'reflect-metadata';
import { validateSync } from 'class-validator';
import fc from 'fast-check';
import { passesAttributeRules, reproducesRulesOf } from '../../src/common/json-api/attribute-check';
import { declaredAttributes, dtoClasses } from '../support/dto-classes';

/** ResourceBodyPipe's options: the verdict passesAttributeRules stands in for. */
const OPTIONS = { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false };

/** Values near every rule's edges: lengths around 255, instants and non-instants, empty and odd types. */
const value = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.constantFrom('', ' ', 'x'.repeat(255), 'x'.repeat(256), 'é'.repeat(255), '2026-11-21T17:02:41.5Z', '2026-11-21T18:02:41.123456+01:00', '2026-02-30T10:00:00Z', '2026-11-21', 'walk'),
  fc.constantFrom(null, undefined, 0, 1, -1, true, false),
  fc.uuid(),
  fc.jsonValue({ maxDepth: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 })),
  fc.array(fc.string({ maxLength: 10 }), { maxLength: 4 }),
);

describe('passesAttributeRules: class-validator\'s verdict, without its executor', () => {
  it.each(dtoClasses())('%s: true exactly when validateSync finds nothing, else false', (_, target) => {
    const names = declaredAttributes(target);
    // Each declared attribute absent, its OpenAPI example (valid, so that valid instances are frequent),
    // or any value; sometimes an attribute no class declares.
    const example = (name: string): unknown => Reflect.getMetadata('swagger/apiModelProperties', target.prototype, name)?.example;
    const attribute = (name: string) => fc.oneof({ arbitrary: fc.constant(example(name)), weight: 3 }, { arbitrary: value, weight: 1 });
    const instances = fc.tuple(
      fc.record(Object.fromEntries(names.map((name) => [name, attribute(name)])), { requiredKeys: [] }),
      fc.oneof({ arbitrary: fc.constant(null), weight: 9 }, { arbitrary: value, weight: 1 }),
    );
    let passed = 0;
    fc.assert(
      fc.property(instances, ([values, unknown]) => {
        const instance = Object.assign(new target(), values, unknown === null ? {} : { unknown });
        const errors = validateSync(instance, OPTIONS);
        const passes = passesAttributeRules(instance);
        // Never a pass class-validator would refuse; a class whose rules it reproduces agrees on every verdict.
        if (passes) expect(errors).toEqual([]);
        if (reproducesRulesOf(target)) expect(passes).toBe(errors.length === 0);
        if (passes) passed++;
      }),
      { numRuns: 300 },
    );
    if (reproducesRulesOf(target)) expect(passed).toBeGreaterThan(10);
  });

  it('compiles the event attributes (the batch path) and leaves nested and `each` rules to class-validator', () => {
    const byName = Object.fromEntries(dtoClasses());
    expect(reproducesRulesOf(byName.CreateEventAttributes)).toBe(true);
    expect(reproducesRulesOf(byName.UpdateEventAttributes)).toBe(true);
    expect(reproducesRulesOf(byName.UpdateTwinAttributes)).toBe(false);
    expect(reproducesRulesOf(byName.CreateWebhookAttributes)).toBe(false);
    const event = Object.assign(new byName.CreateEventAttributes(), { name: 'walk', category: 'activity', data: { steps: 1 }, occurred: '2026-11-21T17:02:41.5Z' });
    expect(passesAttributeRules(event)).toBe(true);
    expect(passesAttributeRules(Object.assign(event, { name: '' }))).toBe(false);
  });
});
