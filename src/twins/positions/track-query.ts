import { invalidParameter } from '../../common/json-api/api-error.js';
import { declareQuery, param, params, type QueryOf } from '../../common/json-api/query.js';

/** The most positions a track page holds. */
export const MAX_TRACK_PAGE_SIZE = 10_000;

const readPageSize = (raw: string, name: string): number => {
  const value = /^[1-9][0-9]{0,5}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value <= MAX_TRACK_PAGE_SIZE)) throw invalidParameter(name, `${name} must be a whole number from 1 to ${MAX_TRACK_PAGE_SIZE}.`);
  return value;
};

/** `GET /twins/<TWIN_ID>/track`. */
export const TRACK_QUERY = declareQuery({
  since: param.timestamp('Positions that occurred at or after this instant (ISO 8601; inclusive).', '2026-11-28T08:00:00Z'),
  until: param.timestamp('Positions that occurred before this instant (ISO 8601; exclusive).', '2026-11-28T09:00:00Z'),
  page_after: param.custom(params.text)('The cursor of the next page: follow the `links` entry with `rel: next`.'),
  page_size: param.custom(readPageSize, { type: 'integer', minimum: 1, maximum: MAX_TRACK_PAGE_SIZE, default: 1000 })(
    `Positions per page: 1000 unless given, at most ${MAX_TRACK_PAGE_SIZE}.`,
    1000,
  ),
  format: param.oneOf('points', 'line')('`points` (default): a Point feature per position; `line`: one LineString feature of the page, its times in `properties.times`.'),
  simplify: param.number(0, 20_037_509)('With `format=line`: thin the line (Douglas–Peucker) to within this many metres of the track; the kept vertices keep their times.', 25),
});
export type TrackQuery = QueryOf<typeof TRACK_QUERY.parameters>;
