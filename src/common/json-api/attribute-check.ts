import { getMetadataStorage, ValidationTypes, type ValidationArguments } from 'class-validator';

/**
 * class-validator's verdict "no errors" for a DTO instance, reached without class-validator's executor
 * when the instance is valid. The executor builds error objects, argument objects and filtered metadata
 * lists for every property of every call, valid or not: on a batch of a thousand event adds, most of
 * the validation's CPU and garbage. Here the class's rules are read once from class-validator's own
 * metadata and run with class-validator's own constraint instances, in the executor's order and under
 * its conditions (`@ValidateIf`, a rule's `validateIf`), for the options ResourceBodyPipe validates with.
 *
 * `true` only when every rule passed; `false` as soon as one did not (or answered anything but `true`),
 * and then the caller runs class-validator itself for the errors and their messages. Classes with rules
 * this does not reproduce (nested, `each`, `@IsDefined`, promises, async constraints) are not compiled:
 * always `false`. test/unit/attribute-check.spec.ts holds every DTO class to class-validator's verdict.
 */
export function passesAttributeRules(instance: object): boolean {
  const rules = rulesOf(instance.constructor as Constructor);
  if (rules === null) return false;
  for (const name of Object.keys(instance)) if (!rules.declared.has(name)) return false; // whitelist: class-validator reports it
  for (const property of rules.properties) {
    const value = (instance as Record<string, unknown>)[property.name];
    if (!property.conditions.every((condition) => condition(instance, value))) continue;
    for (const rule of property.rules) {
      if (rule.validateIf && !rule.validateIf(instance, value)) continue;
      const args: ValidationArguments = { targetName: instance.constructor.name, property: property.name, object: instance, value, constraints: rule.constraintArgs };
      for (const validator of rule.validators) if (validator.validate(value, args) !== true) return false;
    }
  }
  return true;
}

/** Whether passesAttributeRules can pass instances of `target` at all (its rules are all of the kinds it reproduces). */
export const reproducesRulesOf = (target: Constructor): boolean => rulesOf(target) !== null;

type Constructor = new () => object;
type ValidationMetadata = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']>[number];

interface CompiledRule {
  validateIf?: (object: object, value: unknown) => boolean;
  /** The decorator's arguments (`@MaxLength(255)`: [255]), as the constraint receives them. */
  constraintArgs: unknown[];
  /** class-validator's constraint instances of the rule. */
  validators: { validate(value: unknown, args: ValidationArguments): unknown }[];
}

interface CompiledRules {
  declared: ReadonlySet<string>;
  properties: { name: string; conditions: ((object: object, value: unknown) => boolean)[]; rules: CompiledRule[] }[];
}

const compiled = new WeakMap<Constructor, CompiledRules | null>();

function rulesOf(target: Constructor): CompiledRules | null {
  let rules = compiled.get(target);
  if (rules === undefined) {
    rules = compile(target);
    compiled.set(target, rules);
  }
  return rules;
}

/** From the metadata ResourceBodyPipe's validateSync call reads (no schema, no groups, not `always`, not strict). */
function compile(target: Constructor): CompiledRules | null {
  const storage = getMetadataStorage();
  const grouped: Record<string, ValidationMetadata[]> = storage.groupByPropertyName(storage.getTargetValidationMetadatas(target, undefined as unknown as string, false, false, undefined));
  const properties: CompiledRules['properties'] = [];
  for (const [name, metadatas] of Object.entries(grouped)) {
    const conditions: ((object: object, value: unknown) => boolean)[] = [];
    const rules: CompiledRule[] = [];
    for (const metadata of metadatas) {
      if (metadata.type === ValidationTypes.WHITELIST) continue;
      if (metadata.type === ValidationTypes.CONDITIONAL_VALIDATION) {
        conditions.push(metadata.constraints[0] as (object: object, value: unknown) => boolean);
        continue;
      }
      if (metadata.type !== ValidationTypes.CUSTOM_VALIDATION || metadata.each) return null;
      const constraintMetadatas = storage.getTargetValidatorConstraints(metadata.constraintCls);
      if (constraintMetadatas.some((constraint) => constraint.async)) return null;
      rules.push({ validateIf: metadata.validateIf, constraintArgs: metadata.constraints, validators: constraintMetadatas.map((constraint) => constraint.instance) });
    }
    properties.push({ name, conditions, rules });
  }
  return { declared: new Set(Object.keys(grouped)), properties };
}
