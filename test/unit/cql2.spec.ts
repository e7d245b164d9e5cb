import fc from 'fast-check';
import { ApiError } from '../../src/common/json-api/api-error';
import { SqlParams } from '../../src/database/sql-params';
import { FilterError, type Expression } from '../../src/ogc/cql2/cql2-ast';
import { parseCql2Json } from '../../src/ogc/cql2/cql2-json';
import { compileFilter, type Queryable } from '../../src/ogc/cql2/cql2-sql';
import { parseCql2Text } from '../../src/ogc/cql2/cql2-text';
import { readFilter } from '../../src/ogc/cql2/filter';
import { TWIN_QUERYABLES } from '../../src/ogc/ogc-queryables';

const prop = (name: string) => ({ kind: 'property', name });
const str = (value: string) => ({ kind: 'string', value });
const num = (value: number) => ({ kind: 'number', value });

/** The FilterError `fn` throws (fails when it throws nothing or something else). */
function filterError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof FilterError) return error.message;
    throw error;
  }
  throw new Error('expected a FilterError');
}

describe('CQL2 text', () => {
  it('reads comparisons, with keywords in any case and quoted names', () => {
    expect(parseCql2Text("name = 'Café'")).toEqual({ kind: 'compare', op: '=', left: prop('name'), right: str('Café') });
    expect(parseCql2Text('"place-id" <> \'x\'')).toEqual({ kind: 'compare', op: '<>', left: prop('place-id'), right: str('x') });
    expect(parseCql2Text('place-id>=-1.5e2')).toEqual({ kind: 'compare', op: '>=', left: prop('place-id'), right: num(-150) });
    expect(parseCql2Text("'it''s' < city")).toEqual({ kind: 'compare', op: '<', left: str("it's"), right: prop('city') });
    expect(parseCql2Text("city = 'it\\'s'")).toEqual({ kind: 'compare', op: '=', left: prop('city'), right: str("it's") });
  });

  it('gives AND precedence over OR, and NOT over both; parentheses group', () => {
    const a = { kind: 'compare', op: '=', left: prop('a'), right: num(1) };
    const b = { kind: 'compare', op: '=', left: prop('b'), right: num(2) };
    const c = { kind: 'compare', op: '=', left: prop('c'), right: num(3) };
    expect(parseCql2Text('a = 1 or b = 2 AND c = 3')).toEqual({ kind: 'or', args: [a, { kind: 'and', args: [b, c] }] });
    expect(parseCql2Text('(a = 1 OR b = 2) AND NOT c = 3')).toEqual({ kind: 'and', args: [{ kind: 'or', args: [a, b] }, { kind: 'not', arg: c }] });
    expect(parseCql2Text('NOT NOT (a = 1)')).toEqual({ kind: 'not', arg: { kind: 'not', arg: a } });
    expect(parseCql2Text('TRUE AND a = 1')).toEqual({ kind: 'and', args: [{ kind: 'literal', value: true }, a] });
  });

  it('reads LIKE, BETWEEN, IN, IS NULL and their negations, CASEI, TIMESTAMP and DATE', () => {
    expect(parseCql2Text("name NOT LIKE 'A%'")).toEqual({ kind: 'like', negated: true, value: prop('name'), pattern: str('A%') });
    expect(parseCql2Text("CASEI(name) LIKE casei('a%')")).toEqual({ kind: 'like', negated: false, value: { kind: 'casei', operand: prop('name') }, pattern: { kind: 'casei', operand: str('a%') } });
    expect(parseCql2Text("name BETWEEN 'a' AND 'm' AND city = 'x'")).toEqual({
      kind: 'and',
      args: [{ kind: 'between', negated: false, value: prop('name'), low: str('a'), high: str('m') }, { kind: 'compare', op: '=', left: prop('city'), right: str('x') }],
    });
    expect(parseCql2Text("city NOT IN ('a', 'b')")).toEqual({ kind: 'in', negated: true, value: prop('city'), list: [str('a'), str('b')] });
    expect(parseCql2Text('city IS NOT NULL')).toEqual({ kind: 'isNull', negated: true, value: prop('city') });
    expect(parseCql2Text("(city IS NULL)")).toEqual({ kind: 'isNull', negated: false, value: prop('city') });
    expect(parseCql2Text("modified > TIMESTAMP('2026-01-01T00:00:00Z') AND created < DATE('2026-02-01')")).toEqual({
      kind: 'and',
      args: [
        { kind: 'compare', op: '>', left: prop('modified'), right: { kind: 'timestamp', value: '2026-01-01T00:00:00Z' } },
        { kind: 'compare', op: '<', left: prop('created'), right: { kind: 'date', value: '2026-02-01' } },
      ],
    });
  });

  it('reads WKT literals of every type (with Z), BBOX, and the spatial functions', () => {
    const spatial = (text: string) => (parseCql2Text(text) as Extract<Expression, { kind: 'spatial' }>).right;
    expect(spatial('S_INTERSECTS(geometry, POINT(2.35 48.85))')).toEqual({ kind: 'geometry', value: { type: 'Point', coordinates: [2.35, 48.85] } });
    expect(spatial('s_within(geometry, POINT Z (1 2 3))')).toEqual({ kind: 'geometry', value: { type: 'Point', coordinates: [1, 2, 3] } });
    expect(spatial('S_CROSSES(geometry, LINESTRING(0 0, 1 1))')).toEqual({ kind: 'geometry', value: { type: 'LineString', coordinates: [[0, 0], [1, 1]] } });
    expect(spatial('S_WITHIN(geometry, POLYGON((0 0, 1 0, 1 1, 0 0), (0.1 0.1, 0.2 0.1, 0.2 0.2, 0.1 0.1)))')).toEqual({
      kind: 'geometry',
      value: { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 0]], [[0.1, 0.1], [0.2, 0.1], [0.2, 0.2], [0.1, 0.1]]] },
    });
    expect(spatial('S_INTERSECTS(geometry, MULTIPOINT((1 2), (3 4)))')).toEqual(spatial('S_INTERSECTS(geometry, MULTIPOINT(1 2, 3 4))'));
    expect(spatial('S_INTERSECTS(geometry, MULTILINESTRING((0 0, 1 1), (2 2, 3 3)))')).toEqual({ kind: 'geometry', value: { type: 'MultiLineString', coordinates: [[[0, 0], [1, 1]], [[2, 2], [3, 3]]] } });
    expect(spatial('S_INTERSECTS(geometry, MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0))))')).toEqual({ kind: 'geometry', value: { type: 'MultiPolygon', coordinates: [[[[0, 0], [1, 0], [1, 1], [0, 0]]]] } });
    expect(spatial('S_INTERSECTS(geometry, GEOMETRYCOLLECTION(POINT(1 2), LINESTRING(0 0, 1 1)))')).toEqual({
      kind: 'geometry',
      value: { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [1, 2] }, { type: 'LineString', coordinates: [[0, 0], [1, 1]] }] },
    });
    expect(spatial('S_INTERSECTS(geometry, BBOX(1, 2, 3, 4))')).toEqual({ kind: 'geometry', value: { type: 'Polygon', coordinates: [[[1, 2], [3, 2], [3, 4], [1, 4], [1, 2]]] } });
    expect(spatial('S_INTERSECTS(geometry, BBOX(170, 0, -170, 10))')).toMatchObject({ value: { type: 'MultiPolygon' } });
    expect(parseCql2Text('S_DWITHIN(geometry, POINT(2 48), 500)')).toEqual({ kind: 'dwithin', left: prop('geometry'), right: { kind: 'geometry', value: { type: 'Point', coordinates: [2, 48] } }, distance: num(500) });
  });

  it.each([
    ["name = 'x' AND", /character 15: expected a property name or a literal, found the end of the filter/],
    ["name = 'x", /character 8: the string that starts there is not closed/],
    ['name', /expected a comparison operator .* found the end/],
    ["name == 'x'", /character 7: expected a property name or a literal/],
    ["name = 'x' city = 'y'", /character 12: expected AND, OR or the end of the filter/],
    ["(name = 'x'", /expected "\)" closing the parenthesis/],
    ["upper(name) = 'X'", /Unknown function upper\(\)/],
    ['S_INTERSECTS(geometry, POINT(1))', /expected a second coordinate/],
    ['S_INTERSECTS(geometry, POLYGON((0 0, 1 0, 1 1, 0 1)))', /a ring must end where it starts/],
    ['S_INTERSECTS(geometry, LINESTRING(0 0))', /at least 2 positions/],
    ['S_INTERSECTS(geometry, BBOX(1, 2, 3))', /A bbox is 4 numbers/],
    ["name = 'x' # 1", /unexpected "#"/],
    ['AND = 1', /quote a property named like a keyword/],
  ])('refuses %j naming the problem', (text, message) => {
    expect(filterError(() => parseCql2Text(text))).toMatch(message);
  });

  it('refuses nesting deeper than 64 levels, without exhausting the stack', () => {
    expect(filterError(() => parseCql2Text(`${'('.repeat(5000)}a = 1${')'.repeat(5000)}`))).toMatch(/deeper than 64/);
    expect(filterError(() => parseCql2Text(`${'NOT '.repeat(5000)}a = 1`))).toMatch(/deeper than 64/);
  });

  it('never throws anything but a FilterError, whatever the text', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'()\',"=<>!-.0123456789 aAnNdDoOrRtTsSlLkKeEiIzZ_%:POINTBBOX'.split('')), maxLength: 60 }), (text) => {
        try {
          parseCql2Text(text);
        } catch (error) {
          if (!(error instanceof FilterError)) throw error;
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('CQL2 JSON', () => {
  it('reads the same expressions as the text', () => {
    const json = {
      op: 'and',
      args: [
        { op: 'like', args: [{ op: 'casei', args: [{ property: 'name' }] }, { op: 'casei', args: ['a%'] }] },
        { op: 'in', args: [{ property: 'city' }, ['a', 'b']] },
        { op: 'between', args: [{ property: 'name' }, 'a', 'm'] },
        { op: 'not', args: [{ op: 'isNull', args: [{ property: 'city' }] }] },
        { op: '>', args: [{ property: 'modified' }, { timestamp: '2026-01-01T00:00:00Z' }] },
        { op: 's_intersects', args: [{ property: 'geometry' }, { bbox: [1, 2, 3, 4] }] },
        { op: 's_within', args: [{ property: 'geometry' }, { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 0]]] }] },
        { op: 's_dwithin', args: [{ property: 'geometry' }, { type: 'Point', coordinates: [2, 48] }, 500] },
        true,
      ],
    };
    const text =
      "CASEI(name) LIKE CASEI('a%') AND city IN ('a', 'b') AND name BETWEEN 'a' AND 'm' AND NOT city IS NULL AND modified > TIMESTAMP('2026-01-01T00:00:00Z') " +
      'AND S_INTERSECTS(geometry, BBOX(1, 2, 3, 4)) AND S_WITHIN(geometry, POLYGON((0 0, 1 0, 1 1, 0 0))) AND S_DWITHIN(geometry, POINT(2 48), 500) AND TRUE';
    expect(parseCql2Json(JSON.stringify(json))).toEqual(parseCql2Text(text));
  });

  it.each([
    ['{"op": "=", "args": [{"property": "name"}]}', /"=" takes 2 arguments, got 1/],
    ['{"op": "matches", "args": []}', /Unknown operator "matches"/],
    ['{"op": "=", "args": [{"property": "name"}, "x"], "extra": 1}', /Unknown member "extra"/],
    ['{"op": "=", "args": [{"property": "name", "x": 1}, "x"]}', /"property" stands alone/],
    ['{"op": "s_intersects", "args": [{"property": "geometry"}, {"type": "Circle", "coordinates": [1, 2]}]}', /Expected a value, a property or a geometry/],
    ['{"op": "s_intersects", "args": [{"property": "geometry"}, {"type": "Point", "coordinates": [1]}]}', /a Point's coordinates are one position/],
    ['{"op": "in", "args": [{"property": "name"}, []]}', /non-empty array/],
    ['{"op": "=", "args": [{"op": "upper", "args": [{"property": "name"}]}, "X"]}', /"upper" is not a value/],
    ['"name = 1"', /Expected a predicate/],
    ['{"op": ', /The filter is not JSON/],
  ])('refuses %s naming the problem', (text, message) => {
    expect(filterError(() => parseCql2Json(text))).toMatch(message);
  });
});

describe('compiling to SQL', () => {
  const compile = (text: string, options = {}) => {
    const p = new SqlParams();
    return { sql: compileFilter(parseCql2Text(text), TWIN_QUERYABLES, p, 't', options), values: p.values };
  };

  it('binds every literal as a parameter and names only the queryables\' SQL', () => {
    expect(compile("name = 'x''; DROP TABLE twins; --' AND \"place-id\" LIKE '%'")).toEqual({
      sql: "((t.name = $1::text) AND (coalesce(t.place_id, '') LIKE $2::text))",
      values: ["x'; DROP TABLE twins; --", '%'],
    });
    expect(compile("organization IN ('0F8FAD5B-D9CB-469F-A165-70867728950E') AND personal = false")).toEqual({
      sql: '((t.organization_id IN ($1::uuid)) AND (t.personal = $2::boolean))',
      values: ['0f8fad5b-d9cb-469f-a165-70867728950e', false],
    });
    expect(compile("'x' = CASEI(city)")).toEqual({ sql: '($1::text = lower(t.city))', values: ['x'] });
    expect(compile('S_DWITHIN(geometry, POINT(2 48), 10)')).toEqual({
      sql: 'ST_DWithin((t.location)::geography, (ST_SetSRID(ST_GeomFromGeoJSON($1::text), 4326))::geography, $2::float8, false)',
      values: ['{"type":"Point","coordinates":[2,48]}', 10],
    });
    expect(compile("created BETWEEN DATE('2026-01-01') AND TIMESTAMP('2026-02-01T00:00:00Z')").values).toEqual(['2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z']);
  });

  it.each([
    ["colour = 'red'", /Unknown queryable "colour"; the queryables are geometry, created, modified, name/],
    ['name = 5', /Type mismatch in =: name is a string, 5 is a number/],
    ["created > '2026-01-01T00:00:00Z'", /Type mismatch in >: created is a timestamp, '2026-01-01T00:00:00Z' is a string/],
    ["organization = 'acme'", /'acme' is not a UUID/],
    ["personal < true", /< does not apply to booleans/],
    ['S_INTERSECTS(name, POINT(1 2))', /S_INTERSECTS takes geometries; name is a string/],
    ["geometry = 'x'", /Type mismatch/],
    ['S_DWITHIN(geometry, POINT(1 2), -1)', /0 or more/],
    ["name LIKE city", /The pattern of LIKE is a string literal/],
    ['personal LIKE \'t%\'', /LIKE applies to strings; personal is a boolean/],
    ["personal BETWEEN true AND false", /BETWEEN applies to numbers, strings and timestamps/],
    ["modified = TIMESTAMP('yesterday')", /is not an instant/],
    ["created = DATE('2026-02-30')", /is not a date/],
    ['CASEI(personal) = CASEI(name)', /CASEI applies to strings/],
  ])('refuses %j naming the problem', (text, message) => {
    expect(filterError(() => compile(text))).toMatch(message);
  });

  it('reads literals as GDAL 3.6 writes them in cql-text: quoted instants, booleans as 0 and 1', () => {
    expect(compile("modified >= '2026-01-01T00:00:00Z'", { lenientLiterals: true })).toEqual({ sql: '(t.modified >= $1::timestamptz)', values: ['2026-01-01T00:00:00Z'] });
    expect(compile("modified >= '2026-01-01'", { lenientLiterals: true }).values).toEqual(['2026-01-01T00:00:00Z']);
    // GDAL's fields hold booleans as integers: 0 and 1 are false and true there, and nowhere else.
    expect(compile('personal = 1', { lenientLiterals: true })).toEqual({ sql: '(t.personal = $1::boolean)', values: [true] });
    expect(compile('0 <> personal', { lenientLiterals: true })).toEqual({ sql: '($1::boolean <> t.personal)', values: [false] });
    expect(filterError(() => compile('personal = 2', { lenientLiterals: true }))).toMatch(/Type mismatch/);
    expect(filterError(() => compile('personal = 1'))).toMatch(/Type mismatch/);
  });

  it('binds no parameter it does not use (a type is found without binding)', () => {
    const queryables: Record<string, Queryable> = { n: { type: 'number', sql: (t) => `${t}.n` } };
    const p = new SqlParams();
    const sql = compileFilter(parseCql2Text("1 = n AND 'a' IN ('a', 'b')"), queryables, p, 'x');
    expect(sql).toBe('(($1::float8 = x.n) AND ($2::text IN ($3::text, $4::text)))');
    expect(p.values).toEqual([1, 'a', 'a', 'b']);
  });

  it('readFilter reports every problem as a 400 naming filter', () => {
    for (const [text, language] of [
      ["name = 'x", 'cql2-text'],
      ['{"op": "="}', 'cql2-json'],
      ["colour = 'x'", 'cql-text'],
    ] as const) {
      let caught: unknown;
      try {
        readFilter(text, language, TWIN_QUERYABLES);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ApiError);
      expect(caught).toMatchObject({ status: 400, code: 'invalid_parameter', source: { parameter: 'filter' } });
    }
  });
});
