import { castOf, questTasks, select, sqlTypeOf, tables, twins, type Row } from '../../src/database/schema/index';

describe('schema declarations', () => {
  it('writes select lists from the declared columns, in declaration order, with expressions where given', () => {
    expect(select(questTasks, 'k')).toBe('k.id, k.organization_id, k.quest_id, k.name, k.description, k.position, k.place_twin_id, k.created, k.modified');
    expect(select(twins, 't', { only: ['id', 'location'], expressions: { location: (t) => `ST_AsGeoJSON(${t}.location)::json` } })).toBe(
      't.id, ST_AsGeoJSON(t.location)::json AS location',
    );
  });

  it('casts parameters to their column types, arrays included', () => {
    expect(castOf(twins, 'connections')).toBe('::uuid[]');
    expect(castOf(twins, 'meta_data')).toBe('::jsonb');
    expect(castOf(twins, 'tasks_supplied')).toBe('::int');
    expect(sqlTypeOf(twins, 'characteristics')).toBe('text[]');
  });

  it('gives every table one TypeORM entity under its own name, with the same columns', () => {
    const names = tables.map((table) => table.name);
    expect(new Set(names).size).toBe(names.length);
    for (const table of tables) {
      expect(table.entity.options.tableName).toBe(table.name);
      expect(Object.keys(table.entity.options.columns)).toEqual(Object.keys(table.columns));
    }
  });

  it('types rows from the declarations (nullable, arrays, json)', () => {
    const row = {} as Row<typeof twins>;
    // Compile-time checks: these assignments would not type-check if the mapping were wrong.
    const placeId: string | null = row.place_id;
    const tags: string[] = row.tags;
    const supplied: number = row.tasks_supplied;
    const meta: Record<string, unknown> = row.meta_data;
    expect([placeId, tags, supplied, meta]).toEqual([undefined, undefined, undefined, undefined]);
  });
});
