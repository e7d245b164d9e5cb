import fc from 'fast-check';
import { joinJsonParts, jsonArrayPartsSql, type JsonPart } from '../../src/database/json-parts';
import { Sql } from '../../src/database/sql';
import { TestApp } from '../support/test-app';

/**
 * Long JSON arrays read in parts (src/database/json-parts.ts), on whichever database the suite runs
 * against: the parts, joined, are the array json_agg would build, member for member; a long array is
 * several parts of about 32 kB; none at all is an empty array.
 */
describe('JSON arrays in parts', () => {
  let app: TestApp;
  let sql: Sql;

  beforeAll(async () => {
    app = await TestApp.start();
    sql = app.app.get(Sql);
  });
  afterAll(() => app.close());

  /** The parts of the array of the `jsonb` values given, in their order, and json_agg's array of them. */
  const read = async (values: unknown[]) => {
    const from = `(SELECT v.value AS doc, v.n FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS v(value, n)) t`;
    // Read in reverse: joinJsonParts orders the parts itself.
    const rows: JsonPart[] = await sql.query(`SELECT p.part, p.g::int AS g FROM (${jsonArrayPartsSql('t.doc', from)}) p ORDER BY p.g DESC`, [JSON.stringify(values)]);
    const [{ whole }]: { whole: string }[] = await sql.query(
      `SELECT coalesce(json_agg(t.doc ORDER BY t.n), '[]')::text AS whole FROM (SELECT v.value AS doc, v.n FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS v(value, n)) t`,
      [JSON.stringify(values)],
    );
    return { rows, parts: rows.map((row) => row.part!).reverse(), whole };
  };

  it('splits a long array into parts of about 32 kB, in order, which join to the whole array', async () => {
    // 100 items of ~3 kB, with characters of two to four bytes: octet_length, not characters, sizes a part.
    const items = Array.from({ length: 100 }, (_, i) => ({ i, text: `${i}:${'é€😀'.repeat(300)}` }));
    const { rows, parts, whole } = await read(items);
    expect(parts.length).toBeGreaterThanOrEqual(8);
    for (const part of parts.slice(0, -1)) {
      expect(Buffer.byteLength(part)).toBeGreaterThan(28_000);
      expect(Buffer.byteLength(part)).toBeLessThan(32_768 + 3_500);
    }
    expect(rows.map((row) => row.g)).toEqual(parts.map((_, i) => parts.length - 1 - i));
    expect(JSON.parse(joinJsonParts(rows))).toEqual(items);
    expect(JSON.parse(joinJsonParts(rows))).toEqual(JSON.parse(whole));
  });

  it('an item longer than a part is a part of its own', async () => {
    const items = [{ a: 'x'.repeat(100_000) }, { b: 1 }];
    const { rows, parts } = await read(items);
    expect(parts.map((part) => JSON.parse(`[${part}]`))).toEqual([[items[0]], [items[1]]]);
    expect(JSON.parse(joinJsonParts(rows))).toEqual(items);
  });

  it('no items: no parts, an empty array (or the brackets given)', async () => {
    expect((await read([])).parts).toEqual([]);
    expect(joinJsonParts([])).toBe('[]');
    expect(joinJsonParts([{ part: null, g: null }], '{"features":[', ']}')).toBe('{"features":[]}');
  });

  it('any JSON items come back as they were, in order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 40 }), async (values) => {
        // jsonb keeps neither -0 nor duplicate keys' order: compare with what PostgreSQL itself aggregates.
        const { rows, whole } = await read(values);
        expect(JSON.parse(joinJsonParts(rows))).toEqual(JSON.parse(whole));
        expect(JSON.parse(joinJsonParts(rows))).toHaveLength(values.length);
      }),
      { numRuns: 60 },
    );
  });
});
