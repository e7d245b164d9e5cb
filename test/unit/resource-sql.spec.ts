import { sparseResource } from '../../src/common/json-api/representation';
import { jsonObject, ResourceForm, timestamp, toOne, toOneOrNull } from '../../src/common/json-api/resource-sql';
import { isoTimestampSql } from '../../src/database/timestamps';

interface ThingRow {
  id: string;
  name: string;
  made: string;
  weight_g: number;
  colour: string | null;
  owner_id: string;
  parent_id: string | null;
}

/** Every kind of member, and inputs on both sides (a unit for SQL, a multiplier for Node). */
const THING = new ResourceForm<ThingRow, { unit: string }, number>({
  type: 'things',
  attributes: {
    name: 'name',
    made: timestamp('made'),
    looks: jsonObject({ colour: 'colour', 'weight-g': 'weight_g' }),
    weight: { sql: (a, { unit }) => `(${a}.weight_g || '${unit}')`, value: (row, times) => row.weight_g * times },
  },
  relationships: { owner: toOne('owners', 'owner_id'), parent: toOneOrNull('things', 'parent_id') },
});

const ROW: ThingRow = { id: 'T', name: 'n', made: '2026-01-01T00:00:00.000001Z', weight_g: 3, colour: null, owner_id: 'O', parent_id: null };

describe('ResourceForm', () => {
  it('names its attributes, then its relationships, in declaration order', () => {
    expect(THING.names).toEqual(['name', 'made', 'looks', 'weight', 'owner', 'parent']);
  });

  it('writes every member in SQL, in declaration order', () => {
    expect(THING.sql('x', undefined, { unit: 'g' })).toBe(
      `json_build_object('type', 'things', 'id', x.id, 'attributes', json_build_object('name', x.name, 'made', ${isoTimestampSql('x.made')}, ` +
        `'looks', json_build_object('colour', x.colour, 'weight-g', x.weight_g), 'weight', (x.weight_g || 'g')), ` +
        `'relationships', json_build_object('owner', json_build_object('data', json_build_object('type', 'owners', 'id', x.owner_id)), ` +
        `'parent', json_build_object('data', CASE WHEN x.parent_id IS NOT NULL THEN json_build_object('type', 'things', 'id', x.parent_id) END)))`,
    );
  });

  it('keeps what a fieldset names by the rule of sparseResource: attributes always, relationships only when one is kept', () => {
    expect(THING.sql('x', new Set(['name']), { unit: 'g' })).toBe(`json_build_object('type', 'things', 'id', x.id, 'attributes', json_build_object('name', x.name))`);
    expect(THING.sql('x', new Set(['parent']), { unit: 'g' })).toBe(
      `json_build_object('type', 'things', 'id', x.id, 'attributes', '{}'::json, 'relationships', json_build_object('parent', ` +
        `json_build_object('data', CASE WHEN x.parent_id IS NOT NULL THEN json_build_object('type', 'things', 'id', x.parent_id) END)))`,
    );
    const mapped = THING.resource(ROW, 1);
    expect(sparseResource(mapped, { things: new Set(['name']) })).toEqual({ type: 'things', id: 'T', attributes: { name: 'n' } });
    expect(sparseResource(mapped, { things: new Set(['parent']) })).toEqual({ type: 'things', id: 'T', attributes: {}, relationships: { parent: { data: null } } });
  });

  it('maps a row to the same members, in the same order', () => {
    const mapped = THING.resource(ROW, 1000);
    expect(JSON.stringify(mapped)).toBe(
      JSON.stringify({
        type: 'things',
        id: 'T',
        attributes: { name: 'n', made: '2026-01-01T00:00:00.000001Z', looks: { colour: null, 'weight-g': 3 }, weight: 3000 },
        relationships: { owner: { data: { type: 'owners', id: 'O' } }, parent: { data: null } },
      }),
    );
    expect(THING.resource({ ...ROW, parent_id: 'P' }, 1).relationships?.parent).toEqual({ data: { type: 'things', id: 'P' } });
  });

  it('maps each row to objects of its own', () => {
    const first = THING.resource(ROW, 1);
    first.attributes.name = 'changed';
    expect(THING.resource(ROW, 1).attributes.name).toBe('n');
  });

  it('has no relationships member when the form declares none', () => {
    const plain = new ResourceForm<Pick<ThingRow, 'id' | 'name'>>({ type: 'plain', attributes: { name: 'name' } });
    expect(plain.resource({ id: 'P', name: 'n' })).toStrictEqual({ type: 'plain', id: 'P', attributes: { name: 'n' } });
    expect(plain.sql('p', new Set())).toBe(`json_build_object('type', 'plain', 'id', p.id, 'attributes', '{}'::json)`);
  });
});
