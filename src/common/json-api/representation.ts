import { hash } from 'node:crypto';
import { invalidParameter } from './api-error.js';
import type { ResourceObject } from './resource.js';

/**
 * What a read may ask of its document beyond filters and paging (JSON:API 1.1): sparse fieldsets
 * (`fields[<type>]=a,b`), related resources to include (`include=a,b`) and the order (`sort=a,-b`).
 * A route declares what it offers (`RepresentationOffer`, part of its query declaration); anything
 * else is a 400 naming the parameter.
 */
export interface RepresentationOffer {
  /** The member names (attributes and relationships, spelled as the response spells them) of each type the response may hold. */
  fields?: Readonly<Record<string, readonly string[]>>;
  /** The relationship paths `include` may name. */
  include?: readonly string[];
  /** The keys `sort` may name (each also as `-key`, descending). */
  sort?: readonly string[];
}

/** The members to keep, per type; a type not named keeps all its members. */
export type Fieldsets = Readonly<Record<string, ReadonlySet<string>>>;

export interface SortDirective {
  key: string;
  descending: boolean;
}

/** What the request asked for: `fields` is always present (empty: complete resources). */
export interface Representation {
  fields: Fieldsets;
  include: ReadonlySet<string>;
  /** Undefined when no `sort` was given: the route's own order. */
  sort?: readonly SortDirective[];
}

const FIELDS_PARAMETER = /^fields\[([^\]]*)\]$/;
const NO_FIELDSETS: Fieldsets = Object.freeze({});
const NOTHING_INCLUDED: ReadonlySet<string> = new Set();

/** True when `name` is a representation parameter this offer takes (fields[type] of an offered type, include, sort). */
export function offersParameter(offer: RepresentationOffer, name: string): boolean {
  if (name === 'include') return offer.include !== undefined;
  if (name === 'sort') return offer.sort !== undefined;
  const type = FIELDS_PARAMETER.exec(name)?.[1];
  return type !== undefined && offer.fields !== undefined;
}

/** Reads `fields[…]`, `include` and `sort` of a query string that readQuery already checked for unknown and repeated names. */
export function readRepresentation(query: Record<string, unknown>, offer: RepresentationOffer): Representation {
  let fields: Record<string, ReadonlySet<string>> | undefined;
  let include = NOTHING_INCLUDED;
  let sort: SortDirective[] | undefined;
  for (const [name, raw] of Object.entries(query)) {
    if (typeof raw !== 'string') continue;
    if (name === 'include' && offer.include) include = readNames(name, raw, offer.include, 'relationship');
    else if (name === 'sort' && offer.sort) sort = readSort(raw, offer.sort);
    else {
      const type = FIELDS_PARAMETER.exec(name)?.[1];
      if (type === undefined || !offer.fields) continue;
      const members = Object.hasOwn(offer.fields, type) ? offer.fields[type] : undefined;
      if (!members) {
        const types = Object.keys(offer.fields);
        throw invalidParameter(name, `No resources of type "${type}" are in this response; fields[…] may name ${types.map((t) => `"${t}"`).join(', ')}.`);
      }
      // `fields[type]=` (empty) keeps no attribute or relationship: only type and id.
      (fields ??= {})[type] = raw === '' ? new Set() : readNames(name, raw, members, 'field');
    }
  }
  return sort ? { fields: fields ?? NO_FIELDSETS, include, sort } : { fields: fields ?? NO_FIELDSETS, include };
}

function readNames(parameter: string, raw: string, allowed: readonly string[], what: string): ReadonlySet<string> {
  const names = new Set<string>();
  for (const name of raw.split(',')) {
    if (!allowed.includes(name)) {
      throw invalidParameter(parameter, `Unknown ${what} "${name}" in ${parameter}; it may name ${allowed.map((a) => `"${a}"`).join(', ')}.`);
    }
    names.add(name);
  }
  return names;
}

function readSort(raw: string, keys: readonly string[]): SortDirective[] {
  const directives: SortDirective[] = [];
  for (const item of raw.split(',')) {
    const descending = item.startsWith('-');
    const key = descending ? item.slice(1) : item;
    if (!keys.includes(key)) throw invalidParameter('sort', `Unknown sort key "${item}"; sort may name ${keys.map((k) => `"${k}"`).join(', ')}, each with "-" for descending.`);
    if (directives.some((d) => d.key === key)) throw invalidParameter('sort', `sort names "${key}" twice.`);
    directives.push({ key, descending });
  }
  return directives;
}

/** The fieldset of `type`, or undefined when the request keeps all its members. */

/**
 * A resource object with only the requested members (the resource's own type's fieldset): attributes
 * and relationships not named are left out; `attributes` stays (perhaps empty), a `relationships`
 * object left empty goes. The documents PostgreSQL builds follow the same rule (resource-sql.ts).
 */
export function sparseResource(resource: ResourceObject, fields: Fieldsets): ResourceObject {
  const keep = Object.hasOwn(fields, resource.type) ? fields[resource.type] : undefined;
  if (!keep) return resource;
  const out: ResourceObject = { type: resource.type, id: resource.id, attributes: pick(resource.attributes, keep) ?? {} };
  const relationships = pick(resource.relationships, keep);
  if (relationships) out.relationships = relationships as ResourceObject['relationships'];
  if (resource.links) out.links = resource.links;
  if (resource.meta) out.meta = resource.meta;
  return out;
}

function pick<T>(members: Record<string, T> | undefined, keep: ReadonlySet<string>): Record<string, T> | undefined {
  if (!members) return undefined;
  let out: Record<string, T> | undefined;
  for (const name of Object.keys(members)) {
    if (keep.has(name)) (out ??= {})[name] = members[name];
  }
  return out;
}

/**
 * A short, stable name of the sparse fieldsets asked for ('' for none): the part of an entity tag that
 * tells two representations of one resource version apart.
 */
export function representationVariant(fields: Fieldsets): string {
  const types = Object.keys(fields).sort();
  if (types.length === 0) return '';
  const canonical = types.map((type) => `${type}=${[...fields[type]].sort().join(',')}`).join(';');
  return hash('sha1', canonical, 'base64url').slice(0, 10);
}
