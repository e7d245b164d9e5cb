import fc from 'fast-check';
import { joinJsonParts, jsonArrayPartsSql, type JsonPart } from '../../src/database/json-parts';
import { rowShape } from '../../src/database/row-shape';
import { Sql } from '../../src/database/sql';
import { TestApp } from '../support/test-app';

/**
 * Long JSON arrays read in parts (src/database/json-parts.ts), on whichever database the suite runs
 * against: the parts, joined, are the array json_agg would build, member for member; a part holds the
 * items asked for; none at all is an empty array.
 */
describe('JSON arrays in parts', () => {
  let app: TestApp;
  let sql: Sql;

  beforeAll(async () => {
    app = await TestApp.start();
    sql = app.app.get(Sql);
  });
  afterAll(() => app.close());

  const elements = `(SELECT v.value AS doc, v.n FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS v(value, n)) t`;

  /** The parts (`itemsPerPart` items each) of the array of the `jsonb` values given, and json_agg's array of them. */
  const read = async (values: unknown[], itemsPerPart: number) => {
    // Read last part first: joinJsonParts orders the parts itself.
    const rows: JsonPart[] = await sql.rows(rowShape({ part: 'text?', g: 'integer?' }), `SELECT p.part, p.g::int AS g FROM (${jsonArrayPartsSql('t.doc', elements, itemsPerPart)}) p ORDER BY p.g DESC`, [
      JSON.stringify(values),
    ]);
    const whole = await sql.value(rowShape({ whole: 'text' }), `SELECT coalesce(json_agg(t.doc ORDER BY t.n), '[]')::text AS whole FROM ${elements}`, [JSON.stringify(values)]);
    return { rows, whole };
  };

  it('splits an array into parts of the items asked for, the last one shorter, which join to the whole array', async () => {
    // 95 items of ~3 kB, with characters of two to four bytes.
    const items = Array.from({ length: 95 }, (_, i) => ({ i, text: `${i}:${'é€😀'.repeat(300)}` }));
    const { rows, whole } = await read(items, 10);
    expect(rows.map((row) => row.g)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    expect(rows.map((row) => (JSON.parse(`[${row.part}]`) as unknown[]).length)).toEqual([5, 10, 10, 10, 10, 10, 10, 10, 10, 10]);
    expect(JSON.parse(`[${rows[9].part}]`)).toEqual(items.slice(0, 10));
    expect(JSON.parse(joinJsonParts(rows))).toEqual(items);
    expect(JSON.parse(joinJsonParts(rows))).toEqual(JSON.parse(whole));
  });

  it('no items: no parts, an empty array (or the brackets given)', async () => {
    expect((await read([], 10)).rows).toEqual([]);
    expect(joinJsonParts([])).toBe('[]');
    expect(joinJsonParts([{ part: null, g: null }], '{"features":[', ']}')).toBe('{"features":[]}');
  });

  it('any JSON items, in parts of any size, come back as they were, in order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 40 }), fc.integer({ min: 1, max: 12 }), async (values, itemsPerPart) => {
        // jsonb keeps neither -0 nor duplicate keys: compare with what PostgreSQL itself aggregates.
        const { rows, whole } = await read(values, itemsPerPart);
        expect(rows).toHaveLength(Math.ceil(values.length / itemsPerPart));
        expect(JSON.parse(joinJsonParts(rows))).toEqual(JSON.parse(whole));
        expect(JSON.parse(joinJsonParts(rows))).toHaveLength(values.length);
      }),
      { numRuns: 60 },
    );
  });
});
