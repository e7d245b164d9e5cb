import { Body, Injectable, PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync, ValidationError } from 'class-validator';
import { ApiError, conflict, invalidDocument } from './api-error.js';
import { passesAttributeRules } from './attribute-check.js';
import { AggregateApiError } from './error-mapper.js';
import { isPlainObject, isUuid } from '../value-checks.js';

type Constructor<T> = new () => T;

export interface ResourceBodyOptions<A extends object> {
  /** The JSON:API `type` the document must carry. */
  type: string;
  /** class-validator class describing the accepted attributes; any other attribute is refused. */
  attributes?: Constructor<A>;
  /**
   * `required`: the document must carry `data.id`; `optional`: it may (the service checks it with
   * assertIdMatchesPath); `client`: a create that may name its new resource, with a UUID (lowercased
   * here); `forbidden` (the default): a `data.id` is a 403.
   */
  id?: 'required' | 'optional' | 'client' | 'forbidden';
  /** Relationship names the document may carry. */
  relationships?: string[];
  /** When true an absent body is accepted (DELETE bodies are optional). */
  optional?: boolean;
}

/** A validated `{data: {type, id?, attributes, relationships?}}` request document. */
export interface ResourceDocument<A> {
  id?: string;
  attributes: A;
  /** Attribute names actually present in the request, for partial updates. */
  present: Set<string>;
  relationships: Record<string, unknown>;
}

/**
 * Deepest nesting a request document may have (the document itself is level 1). Validation and
 * serialisation walk values recursively, so a deeper document (a few kilobytes of `[[[[…`) would
 * exhaust the stack: it is refused up front, walking iteratively.
 */
export const MAX_DOCUMENT_DEPTH = 64;

/** U+0000, or a UTF-16 surrogate without its pair: text PostgreSQL cannot store (text and jsonb refuse it). */
// eslint-disable-next-line no-control-regex -- finding U+0000 is the point
const UNSTORABLE_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * What no attribute may contain, checked once for the whole document before validation: nesting deeper
 * than MAX_DOCUMENT_DEPTH, and strings (values or member names) with U+0000 or unpaired surrogates,
 * which would fail in the database instead of being refused. Returns the problem with its pointer.
 */
export function unstorableMember(body: unknown): { pointer: string; detail: string } | undefined {
  const found = unstorableBelow(body, 1);
  return found && { pointer: found.segments.length === 0 ? '' : `/${found.segments.reverse().map(escapePointer).join('/')}`, detail: found.detail };
}

/**
 * The walk of unstorableMember. It allocates nothing on the way down (a batch of a thousand events has
 * tens of thousands of members; building pointers or a work list for each was most of its cost): the
 * failing member's path is collected on the way back up, innermost first. Recursion is bounded by
 * MAX_DOCUMENT_DEPTH, which is checked before going deeper.
 */
function unstorableBelow(value: unknown, depth: number): { segments: string[]; detail: string } | undefined {
  if (typeof value === 'string') {
    return UNSTORABLE_TEXT.test(value) ? { segments: [], detail: 'Text must not contain U+0000 (NUL) or unpaired UTF-16 surrogates.' } : undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth > MAX_DOCUMENT_DEPTH) return { segments: [], detail: `The document is nested more than ${MAX_DOCUMENT_DEPTH} levels deep.` };
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = unstorableBelow(value[index], depth + 1);
      if (found) {
        found.segments.push(String(index));
        return found;
      }
    }
    return undefined;
  }
  for (const name in value) {
    if (!Object.hasOwn(value, name)) continue;
    if (UNSTORABLE_TEXT.test(name)) return { segments: [name], detail: 'Member names must not contain U+0000 (NUL) or unpaired UTF-16 surrogates.' };
    const found = unstorableBelow((value as Record<string, unknown>)[name], depth + 1);
    if (found) {
      found.segments.push(name);
      return found;
    }
  }
  return undefined;
}

/** What attribute-check.ts reproduces the verdict of: keep the two together. */
const VALIDATOR_OPTIONS = { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false } as const;

const AS_SENT = Symbol('attributes taken as sent');

/**
 * Marks an attribute whose value the service receives exactly as parsed from the request: free-form
 * JSON (event `data`, twin `meta-data`) and values the service checks itself (`location`).
 * class-transformer copies objects by assignment and skips member names that exist on the target's
 * prototype chain (`toString`, `valueOf`, `constructor`, …, and `__proto__`, which would even replace
 * the copy's prototype), so it never sees these values: the validators still run on them.
 */
export function AsSent(): PropertyDecorator {
  return (prototype, property) => {
    const inherited: ReadonlySet<string | symbol> = Reflect.getMetadata(AS_SENT, prototype.constructor) ?? new Set();
    Reflect.defineMetadata(AS_SENT, new Set([...inherited, property]), prototype.constructor);
  };
}

const asSentAttributes = (target: Constructor<object>): ReadonlySet<string | symbol> => Reflect.getMetadata(AS_SENT, target) ?? new Set();

/** Attribute names a DTO class declares (every property with at least one class-validator rule). */
const declaredAttributes = new WeakMap<Constructor<object>, ReadonlySet<string>>();
function attributeNames(target: Constructor<object>): ReadonlySet<string> {
  let names = declaredAttributes.get(target);
  if (!names) {
    names = new Set(getMetadataStorage().getTargetValidationMetadatas(target, '', true, false).map((rule) => rule.propertyName));
    declaredAttributes.set(target, names);
  }
  return names;
}

/**
 * Member names that have a meaning on every JavaScript object. No DTO declares one, so outside the
 * attributes taken as sent they are unknown attributes; refusing them before class-transformer runs
 * keeps it from assigning `__proto__` or shadowing `constructor` on the objects it builds.
 */
const OBJECT_PROTOTYPE_NAMES = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

function prototypeNamedMember(value: unknown, attribute: string): { name: string; pointer: string } | undefined {
  const found = prototypeNamedBelow(value);
  return found && { name: found[0], pointer: `/data/attributes/${[attribute, ...found.reverse()].map(escapePointer).join('/')}` };
}

/** The path (innermost first) to the first member named like an Object.prototype member, below `value`. */
function prototypeNamedBelow(value: unknown): string[] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const array = Array.isArray(value);
  for (const [name, child] of Object.entries(value)) {
    if (!array && OBJECT_PROTOTYPE_NAMES.has(name)) return [name];
    const found = prototypeNamedBelow(child);
    if (found) {
      found.push(name);
      return found;
    }
  }
  return undefined;
}

/**
 * Checks the JSON:API document structure and validates its attributes, reporting every problem
 * with a JSON pointer so clients can highlight the offending field.
 */
@Injectable()
export class ResourceBodyPipe<A extends object> implements PipeTransform<unknown, ResourceDocument<A> | undefined> {
  constructor(private readonly options: ResourceBodyOptions<A>) {}

  transform(body: unknown): ResourceDocument<A> | undefined {
    if (body === undefined || body === null || body === '') {
      if (this.options.optional) return undefined;
      throw invalidDocument('The request needs a JSON:API document with a top-level "data" member.', '');
    }
    if (!isPlainObject(body)) throw invalidDocument('The request document must be a JSON object.', '');
    const unstorable = unstorableMember(body);
    if (unstorable) throw invalidDocument(unstorable.detail, unstorable.pointer);
    const data = body.data;
    if (!isPlainObject(data)) throw invalidDocument('"data" must be a resource object.', '/data');
    if (data.type === undefined) throw invalidDocument('"type" is required.', '/data/type');
    if (typeof data.type !== 'string') throw invalidDocument('"type" must be a string.', '/data/type');
    if (data.type !== this.options.type) {
      throw conflict(`"type" must be "${this.options.type}".`, { pointer: '/data/type' }, 'type_mismatch');
    }
    const idRule = this.options.id ?? 'forbidden';
    if (data.id !== undefined) {
      if (idRule === 'forbidden') {
        throw new ApiError(403, 'client_generated_id', 'Forbidden', 'Client-generated ids are not supported.', { pointer: '/data/id' });
      }
      if (typeof data.id !== 'string') throw invalidDocument('"id" must be a string.', '/data/id');
      if (idRule === 'client' && !isUuid(data.id)) throw invalidDocument('"id" must be a UUID (a client-generated id).', '/data/id');
    } else if (idRule === 'required') {
      throw invalidDocument('"id" is required.', '/data/id');
    }

    const rawAttributes = data.attributes ?? {};
    if (!isPlainObject(rawAttributes)) throw invalidDocument('"attributes" must be an object.', '/data/attributes');
    const attributes = this.validateAttributes(rawAttributes);

    const rawRelationships = data.relationships ?? {};
    if (!isPlainObject(rawRelationships)) throw invalidDocument('"relationships" must be an object.', '/data/relationships');
    const allowed = new Set(this.options.relationships ?? []);
    for (const name of Object.keys(rawRelationships)) {
      if (!allowed.has(name)) throw invalidDocument(`Unknown relationship "${name}".`, `/data/relationships/${escapePointer(name)}`);
    }
    return {
      id: idRule === 'client' && typeof data.id === 'string' ? data.id.toLowerCase() : (data.id as string | undefined),
      attributes,
      present: new Set(Object.keys(rawAttributes)),
      relationships: rawRelationships,
    };
  }

  private validateAttributes(raw: Record<string, unknown>): A {
    const target = this.options.attributes;
    if (!target) {
      const first = Object.keys(raw)[0];
      if (first !== undefined) throw invalidDocument(`Unknown attribute "${first}".`, `/data/attributes/${escapePointer(first)}`);
      return {} as A;
    }
    const declared = attributeNames(target);
    const asSent = asSentAttributes(target);
    const problems: ApiError[] = [];
    // Only declared attributes reach class-transformer, and those taken as sent are set afterwards.
    const transformable: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(raw)) {
      if (!declared.has(name)) {
        problems.push(invalidDocument(`Unknown attribute "${name}".`, `/data/attributes/${escapePointer(name)}`));
      } else if (!asSent.has(name)) {
        const member = prototypeNamedMember(value, name);
        if (member) problems.push(invalidDocument(`Unknown attribute "${member.name}".`, member.pointer));
        else transformable[name] = value;
      }
    }
    const instance = attributesInstance(target, transformable);
    for (const name of asSent) {
      if (typeof name === 'string' && Object.hasOwn(raw, name)) {
        Object.defineProperty(instance, name, { value: raw[name], enumerable: true, writable: true, configurable: true });
      }
    }
    // class-validator itself runs only when a rule failed, for its errors and their messages.
    const errors = passesAttributeRules(instance) ? [] : validateSync(instance, VALIDATOR_OPTIONS);
    problems.push(...flatten(errors, '/data/attributes').map(({ pointer, detail }) => invalidDocument(detail, pointer)));
    if (problems.length === 0) return instance;
    if (problems.length === 1) throw problems[0];
    throw new AggregateApiError(400, problems);
  }
}

/**
 * class-transformer's instance of `values`. Without implicit conversion it copies a primitive as it is
 * (no DTO transforms one: resource-body.spec.ts checks every DTO class), so values that are all
 * primitives need only the instance; plainToInstance was the costliest step of a batch's event adds.
 */
export function attributesInstance<A extends object>(target: Constructor<A>, values: Record<string, unknown>): A {
  for (const name in values) {
    const value = values[name];
    if (typeof value === 'object' && value !== null) return plainToInstance(target, values, { enableImplicitConversion: false });
  }
  return Object.assign(new target(), values);
}

/**
 * class-validator rules on the kind of a value. When one fails, the attribute's other rules fail with it
 * (a number as `name` is neither a string nor "shorter than 255 characters"), and only it says what to fix.
 */
const TYPE_RULES: ReadonlySet<string> = new Set(['isDefined', 'isString', 'isNumber', 'isInt', 'isBoolean', 'isArray', 'isObject', 'isUuid', 'isDateString', 'isIso8601']);

/**
 * One message per attribute, whatever number of its rules failed: the first failed type rule the DTO
 * declares, else its first failed rule. class-validator lists a property's failures in the order its
 * decorators ran, which is bottom-up, so the topmost is the last listed (`@IsArray() @IsUUID('all', {each})`
 * given a number: "must be an array", not "each value must be a UUID").
 */
function oneMessage(property: string, constraints: Record<string, string>): string {
  const failed = Object.entries(constraints);
  if (failed.some(([rule]) => rule === 'whitelistValidation')) return `Unknown attribute "${property}".`;
  const types = failed.filter(([rule]) => TYPE_RULES.has(rule));
  const [, message] = (types.length > 0 ? types : failed).at(-1)!;
  return message;
}

function flatten(errors: ValidationError[], base: string): { pointer: string; detail: string }[] {
  const out: { pointer: string; detail: string }[] = [];
  for (const error of errors) {
    const pointer = `${base}/${escapePointer(error.property)}`;
    if (error.constraints && Object.keys(error.constraints).length > 0) out.push({ pointer, detail: oneMessage(error.property, error.constraints) });
    if (error.children?.length) out.push(...flatten(error.children, pointer));
  }
  return out;
}

/** RFC 6901 escaping of one pointer segment. */
export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** `@ResourceBody({type: 'twins', attributes: CreateTwinAttributes})` on a handler parameter. */
export const ResourceBody = <A extends object>(options: ResourceBodyOptions<A>) => Body(new ResourceBodyPipe<A>(options));

/** The ids of a to-many relationship `{data: [{type, id}, …]}` of a request document. */
export function readToMany(document: ResourceDocument<unknown>, name: string, type: string, required = false): string[] {
  const base = `/data/relationships/${escapePointer(name)}`;
  const relationship = document.relationships[name];
  if (relationship === undefined) {
    if (required) throw invalidDocument(`Relationship "${name}" is required.`, base);
    return [];
  }
  if (!isPlainObject(relationship) || !Array.isArray(relationship.data)) {
    throw invalidDocument(`"${name}" must be {"data": [{"type": "${type}", "id": …}]}.`, `${base}/data`);
  }
  return relationship.data.map((item, index) => readIdentifier(item, type, `${base}/data/${index}`));
}

/** The id of a to-one relationship `{data: {type, id} | null}`; undefined when absent, null when cleared. */
export function readToOne(document: ResourceDocument<unknown>, name: string, type: string): string | null | undefined {
  const base = `/data/relationships/${escapePointer(name)}`;
  const relationship = document.relationships[name];
  if (relationship === undefined) return undefined;
  if (!isPlainObject(relationship) || !('data' in relationship)) {
    throw invalidDocument(`"${name}" must be {"data": {"type": "${type}", "id": …}} or {"data": null}.`, base);
  }
  if (relationship.data === null) return null;
  return readIdentifier(relationship.data, type, `${base}/data`);
}


function readIdentifier(item: unknown, type: string, pointer: string): string {
  if (!isPlainObject(item)) throw invalidDocument(`Expected a resource identifier {"type": "${type}", "id": …}.`, pointer);
  if (item.type !== type) throw conflict(`"type" must be "${type}".`, { pointer: `${pointer}/type` }, 'type_mismatch');
  if (!isUuid(item.id)) throw invalidDocument('"id" must be a UUID.', `${pointer}/id`);
  return item.id.toLowerCase();
}

/** JSON:API: a document `id` that differs from the one in the URL is a 409 Conflict. */
export function assertIdMatchesPath(documentId: string | undefined, pathId: string): void {
  if (documentId !== undefined && documentId.toLowerCase() !== pathId) {
    throw conflict(`"id" must be the id of the URL (${pathId}).`, { pointer: '/data/id' }, 'id_mismatch');
  }
}
