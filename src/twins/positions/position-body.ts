import { ApiError, invalidDocument } from '../../common/json-api/api-error.js';
import { AggregateApiError } from '../../common/json-api/error-mapper.js';
import { isInstant } from '../../common/json-api/query.js';
import { isFiniteNumber, isPlainObject, isUuid } from '../../common/value-checks.js';

/** Positions per upload (`POST /twins/<TWIN_ID>/positions`). */
export const MAX_POSITIONS = 1000;
/** A device clock may run ahead of the service's by this much; a position further in the future is refused. */
export const FUTURE_TOLERANCE_MS = 24 * 3600 * 1000;
/** Problems reported per refused upload: enough to fix a device's encoder, not a megabyte of errors. */
const MAX_REPORTED = 100;

/** One position as sent (`attributes` of a `positions` resource object), validated. */
export interface Position {
  lon: number;
  lat: number;
  /** ISO 8601 as sent: PostgreSQL reads it at full (microsecond) precision. */
  occurred: string;
  /** `occurred` as milliseconds since the epoch (its day's partition; the retention). */
  occurredMs: number;
  accuracy: number | null;
  speed: number | null;
  heading: number | null;
  altitude: number | null;
}

/** What an upload may say of when a position is acceptable. */
export interface PositionWindow {
  /** Now, by the service's clock (ms). */
  now: number;
  /** POSITION_RETENTION_DAYS: older positions are refused (0: none is too old). */
  retentionDays: number;
}

const ATTRIBUTES = new Set(['coordinates', 'occurred', 'accuracy', 'speed', 'heading', 'altitude']);

/** The optional numbers, by attribute: each null or a finite number in its range. */
const MEASURES = {
  accuracy: { check: (v: number) => v >= 0, rule: 'metres, 0 or more' },
  speed: { check: (v: number) => v >= 0, rule: 'metres per second, 0 or more' },
  heading: { check: (v: number) => v >= 0 && v < 360, rule: 'degrees clockwise from north, from 0 up to (not including) 360' },
  altitude: { check: () => true, rule: 'metres above the WGS 84 ellipsoid' },
};

/** Collects the problems of a document, each with its pointer, and throws them together. */
class Problems {
  readonly list: ApiError[] = [];
  add(detail: string, pointer: string): void {
    if (this.list.length < MAX_REPORTED) this.list.push(invalidDocument(detail, pointer));
  }
  throwIfAny(): void {
    if (this.list.length === 1) throw this.list[0];
    if (this.list.length > 1) throw new AggregateApiError(400, this.list);
  }
}

/**
 * The positions of an upload, `{data: [{type: "positions", attributes: {…}}, …]}`, 1 to MAX_POSITIONS.
 * All or nothing: every problem is reported (400, `source.pointer` `/data/<n>/…`), and none is stored.
 */
export function readPositionUpload(body: unknown, window: PositionWindow): Position[] {
  if (!isPlainObject(body)) throw invalidDocument('The request document must be a JSON object {"data": [positions]}.', '');
  const unknown = Object.keys(body).find((name) => name !== 'data' && name !== 'meta' && name !== 'jsonapi');
  if (unknown !== undefined) throw invalidDocument(`Unknown member "${unknown}".`, `/${unknown.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  const data = body.data;
  if (!Array.isArray(data)) throw invalidDocument('"data" must be an array of positions resource objects.', '/data');
  if (data.length === 0 || data.length > MAX_POSITIONS) {
    throw invalidDocument(`"data" must hold 1 to ${MAX_POSITIONS} positions (${data.length} sent).`, '/data');
  }
  const problems = new Problems();
  const positions = new Array<Position>(data.length);
  for (let index = 0; index < data.length; index++) positions[index] = readPositionResource(data[index], index, window, problems, false)?.position as Position;
  problems.throwIfAny();
  return positions;
}

/** A position of a batch (`add` of `positions` in `POST /operations`), naming its twin in `relationships.twin`. */
export function readPositionOperation(data: unknown, window: PositionWindow): { twinId: string; position: Position } {
  const problems = new Problems();
  const read = readPositionResource(data, null, window, problems, true);
  problems.throwIfAny();
  return read as { twinId: string; position: Position };
}

/**
 * A positions resource object; undefined (with its problems added) when it is not a valid one. `index`:
 * its place in an upload's `data`, or null for an operation's `data`. Pointers are written only for
 * problems: every position of an upload passes here, and a batch of 1,000 spent ~0.4 ms of Node on
 * strings, key arrays and records it then dropped (bench/fleet.mjs profile).
 */
function readPositionResource(
  resource: unknown,
  index: number | null,
  window: PositionWindow,
  problems: Problems,
  namesTwin: boolean,
): { twinId: string | undefined; position: Position } | undefined {
  if (!isPlainObject(resource)) {
    problems.add('A position must be a resource object {"type": "positions", "attributes": {…}}.', pointerOf(index, ''));
    return undefined;
  }
  const before = problems.list.length;
  for (const member in resource) {
    if (member === 'type' || member === 'attributes' || member === 'meta' || (namesTwin && member === 'relationships')) continue;
    if (member === 'id' || member === 'lid') throw new ApiError(403, 'forbidden', 'Forbidden', 'Positions have no id: a twin and its `occurred` name one.', { pointer: pointerOf(index, `/${member}`) });
    problems.add(`Unknown member "${member}" of a position.`, pointerOf(index, `/${member}`));
  }
  if (resource.type !== 'positions') {
    if (typeof resource.type === 'string') throw new ApiError(409, 'type_mismatch', 'Conflict', '"type" must be "positions".', { pointer: pointerOf(index, '/type') });
    problems.add('"type" must be "positions".', pointerOf(index, '/type'));
  }
  const twinId = namesTwin ? readTwinRelationship(resource.relationships, pointerOf(index, '/relationships'), problems) : undefined;
  const attributes = resource.attributes;
  if (!isPlainObject(attributes)) {
    problems.add('"attributes" must be an object with "coordinates" and "occurred".', pointerOf(index, '/attributes'));
    return undefined;
  }
  for (const name in attributes) {
    if (!ATTRIBUTES.has(name)) problems.add(`Unknown attribute "${name}" of a position (coordinates, occurred, accuracy, speed, heading, altitude).`, pointerOf(index, `/attributes/${name}`));
  }
  const coordinates = attributes.coordinates;
  let lon = 0;
  let lat = 0;
  if (Array.isArray(coordinates) && coordinates.length === 2 && isFiniteNumber(coordinates[0]) && isFiniteNumber(coordinates[1])) {
    [lon, lat] = coordinates as [number, number];
    if (lon < -180 || lon > 180) problems.add('The longitude (coordinates[0]) must be from -180 to 180.', pointerOf(index, '/attributes/coordinates/0'));
    if (lat < -90 || lat > 90) problems.add('The latitude (coordinates[1]) must be from -90 to 90.', pointerOf(index, '/attributes/coordinates/1'));
  } else {
    problems.add('coordinates is required: [longitude, latitude] in degrees (WGS 84), two numbers; altitude has its own attribute.', pointerOf(index, '/attributes/coordinates'));
  }
  const occurred = attributes.occurred;
  let occurredMs = Number.NaN;
  if (typeof occurred !== 'string' || !isInstant(occurred)) {
    problems.add(
      'occurred is required: an ISO 8601 timestamp with seconds and an offset (Z or ±hh:mm), at most microseconds, of a real date (years 1–9999).',
      pointerOf(index, '/attributes/occurred'),
    );
  } else {
    occurredMs = Date.parse(occurred);
    if (occurredMs > window.now + FUTURE_TOLERANCE_MS) {
      problems.add(`occurred ${occurred} is more than a day ahead of the service's clock: check the device's clock.`, pointerOf(index, '/attributes/occurred'));
    } else if (window.retentionDays > 0 && occurredMs < window.now - window.retentionDays * DAY_MS) {
      problems.add(
        `occurred ${occurred} is older than the service keeps positions (POSITION_RETENTION_DAYS: ${window.retentionDays} days); it would be dropped.`,
        pointerOf(index, '/attributes/occurred'),
      );
    }
  }
  const accuracy = readMeasure(attributes, 'accuracy', index, problems);
  const speed = readMeasure(attributes, 'speed', index, problems);
  const heading = readMeasure(attributes, 'heading', index, problems);
  const altitude = readMeasure(attributes, 'altitude', index, problems);
  if (problems.list.length > before) return undefined;
  return { twinId, position: { lon, lat, occurred: occurred as string, occurredMs, accuracy, speed, heading, altitude } };
}

/** The JSON pointer of `member` (`/attributes/…`, or '' for the resource itself) of the position at `index` (null: an operation's `/data`). */
const pointerOf = (index: number | null, member: string): string => (index === null ? `/data${member}` : `/data/${index}${member}`);

/** The optional number `name` of `attributes`: null when absent, the value when in its range; null with a problem added otherwise. */
function readMeasure(attributes: Record<string, unknown>, name: keyof typeof MEASURES, index: number | null, problems: Problems): number | null {
  const value = attributes[name];
  if (value === undefined || value === null) return null;
  if (isFiniteNumber(value) && MEASURES[name].check(value)) return value;
  problems.add(`${name} must be null or a number: ${MEASURES[name].rule}.`, pointerOf(index, `/attributes/${name}`));
  return null;
}

function readTwinRelationship(relationships: unknown, pointer: string, problems: Problems): string | undefined {
  const twin = isPlainObject(relationships) ? relationships.twin : undefined;
  const data = isPlainObject(twin) ? twin.data : undefined;
  if (!isPlainObject(data) || data.type !== 'twins' || !isUuid(data.id)) {
    problems.add('A position of a batch names its twin: "relationships": {"twin": {"data": {"type": "twins", "id": <TWIN_ID>}}}.', `${pointer}/twin`);
    return undefined;
  }
  const unknown = Object.keys(relationships as object).find((name) => name !== 'twin');
  if (unknown !== undefined) problems.add(`Unknown relationship "${unknown}" of a position (only "twin").`, `${pointer}/${unknown}`);
  return data.id.toLowerCase();
}

/** A UTC day, the span of a positions partition. */
export const DAY_MS = 86_400_000;

/** The UTC day (`YYYY-MM-DD`) of a time in ms: the partition a position is stored in. */
export const utcDay = (ms: number): string => new Date(Math.floor(ms / DAY_MS) * DAY_MS).toISOString().slice(0, 10);

/**
 * The UTC days of the positions, each once, in the order first met. Each day is formatted once: formatted
 * per position, a batch of 1,000 spent ~0.9 ms of Node on dates of the same day (bench/fleet.mjs profile).
 */
export function utcDaysOf(positions: readonly Pick<Position, 'occurredMs'>[]): string[] {
  const days = new Set<number>();
  for (const position of positions) days.add(Math.floor(position.occurredMs / DAY_MS));
  return [...days].map((day) => utcDay(day * DAY_MS));
}
