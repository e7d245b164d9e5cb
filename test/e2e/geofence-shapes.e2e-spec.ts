import fc from 'fast-check';
import { BOUNDARY_MARGIN, GeofenceShapes, ringsOfWkb } from '../../src/geofences/geofence-shapes';
import { TestApp } from '../support/test-app';

/**
 * The geofences an instance holds in memory (src/geofences/geofence-shapes.ts) decide a point as PostGIS's
 * `ST_Covers` does, or leave it to PostGIS: random star-shaped polygons, with holes and as MultiPolygons,
 * against random points, their vertices, points on their edges and points a hair from them.
 */

type Ring = [number, number][];

/** A star-shaped ring around (cx, cy): n vertices at increasing angles, radii r × (0.5 … 1). */
const star = (cx: number, cy: number, r: number, radii: number[]): Ring => {
  const ring: Ring = radii.map((k, i) => [cx + Math.cos((i / radii.length) * 2 * Math.PI) * r * k, cy + Math.sin((i / radii.length) * 2 * Math.PI) * r * k]);
  return [...ring, ring[0]];
};

describe('geofence shapes held in memory', () => {
  let service: TestApp;
  beforeAll(async () => {
    service = await TestApp.start();
  });
  afterAll(() => service.close());

  /** PostGIS's WKB of the GeoJSON geometry and its ST_Covers of each point. */
  const postgis = async (geometry: unknown, points: [number, number][]) => {
    const rows: { wkb: Buffer; covers: boolean[] }[] = await service.dataSource.query(
      `SELECT ST_AsBinary(g) AS wkb, (SELECT array_agg(ST_Covers(g, ST_SetSRID(ST_MakePoint(x, y), 4326)) ORDER BY o) FROM unnest($2::float8[], $3::float8[]) WITH ORDINALITY p(x, y, o)) AS covers
         FROM (SELECT ST_SetSRID(ST_GeomFromGeoJSON($1), 4326) AS g) x`,
      [JSON.stringify(geometry), points.map(([x]) => x), points.map(([, y]) => y)],
    );
    return { wkb: Buffer.from(rows[0].wkb), covers: rows[0].covers };
  };

  it('reads the rings of a Polygon with a hole and of a MultiPolygon from WKB', async () => {
    const shell = star(10, 20, 1, [1, 1, 1, 1]);
    const hole = star(10, 20, 0.3, [1, 1, 1]);
    const { wkb } = await postgis({ type: 'MultiPolygon', coordinates: [[shell, hole], [star(15, 20, 1, [1, 1, 1])]] }, []);
    const rings = ringsOfWkb(wkb).map((ring) => Array.from(ring));
    expect(rings.map((ring) => ring.length / 2)).toEqual([5, 4, 4]);
    expect(rings[1].slice(0, 2)).toEqual(hole[0]);
    expect(() => ringsOfWkb(Buffer.concat([wkb, Buffer.from([0])]))).toThrow('WKB longer than its geometry');
  });

  it("decides every point as PostGIS's ST_Covers, or leaves it to PostGIS within the margin", async () => {
    const radii = fc.array(fc.double({ min: 0.5, max: 1, noNaN: true }), { minLength: 3, maxLength: 40 });
    const shape = fc.record({
      cx: fc.double({ min: -170, max: 170, noNaN: true }),
      cy: fc.double({ min: -80, max: 80, noNaN: true }),
      r: fc.double({ min: 0.0001, max: 5, noNaN: true }),
      shell: radii,
      hole: fc.option(fc.array(fc.constant(1), { minLength: 3, maxLength: 8 }), { nil: undefined }),
      twin: fc.option(radii, { nil: undefined }),
    });
    let nearPoints = 0;
    let pathsFound = 0;
    let decided = 0;
    await fc.assert(
      fc.asyncProperty(shape, fc.array(fc.tuple(fc.integer({ min: -12_000, max: 12_000 }), fc.integer({ min: -12_000, max: 12_000 })).map(([x, y]) => [x / 10_000, y / 10_000]), { maxLength: 40 }), fc.integer(), async (s, offsets, seed) => {
        const shell = star(s.cx, s.cy, s.r, s.shell);
        // A hole of 0.2 r, inside the shell (whose edges pass at least 0.5 r × cos 60° from the centre); a
        // second polygon 3 r east.
        const polygon = s.hole ? [shell, star(s.cx, s.cy, 0.2 * s.r, s.hole).reverse()] : [shell];
        const geometry = s.twin ? { type: 'MultiPolygon', coordinates: [polygon, [star(s.cx + 3 * s.r, s.cy, s.r, s.twin)]] } : { type: 'Polygon', coordinates: polygon };
        const rings = geometry.type === 'Polygon' ? (geometry.coordinates as Ring[]) : (geometry.coordinates as Ring[][]).flat();
        const vertices = rings.flat();
        // Random points around, every vertex, each edge's midpoint, and points a hair (1e-12°) and just past
        // the margin (2e-9°) off a vertex.
        const points: [number, number][] = [
          ...offsets.map(([dx, dy]): [number, number] => [s.cx + dx * 4 * s.r, s.cy + dy * 2 * s.r]),
          ...vertices,
          ...rings.flatMap((ring) => ring.slice(1).map(([x, y], i): [number, number] => [(x + ring[i][0]) / 2, (y + ring[i][1]) / 2])),
          ...vertices.map(([x, y], i): [number, number] => [x + ((seed + i) % 2 === 0 ? 1e-12 : -2 * BOUNDARY_MARGIN), y]),
        ];
        const { wkb, covers } = await postgis(geometry, points);
        expect(covers).toHaveLength(points.length);
        const shapes = new GeofenceShapes([{ id: 'g', wkb }]);
        points.forEach(([x, y], i) => {
          const coverage = shapes.coverageOf('g', x, y);
          if (coverage === 'near') nearPoints++;
          else {
            decided++;
            expect([i, x, y, coverage]).toEqual([i, x, y, covers[i] ? 'inside' : 'outside']);
          }
        });
        // The random points as a path, and all of them: PostGIS's crossings, or none found here when a point
        // is near the boundary.
        for (const length of [offsets.length, points.length]) {
          const path = points.slice(0, length);
          const near = path.some(([x, y]) => shapes.coverageOf('g', x, y) === 'near');
          const steps = covers.slice(0, length).flatMap((inside, k) => (k > 0 && inside !== covers[k - 1] ? [{ step: k, geofence: 0, entered: inside }] : []));
          const found = shapes.crossingsOf(path.map(([lon, lat]) => ({ lon, lat })));
          expect(found).toEqual(near ? null : { first: length > 0 && covers[0] ? [0] : [], steps });
          if (found && steps.length > 0) pathsFound++;
        }
      }),
      { numRuns: 150 },
    );
    // Vertices, midpoints and hairs are near, the rest decided here (a test of which every point was near would prove nothing).
    expect(nearPoints).toBeGreaterThan(0);
    expect(pathsFound).toBeGreaterThan(20);
    expect(decided).toBeGreaterThan(1000);
  }, 60_000);
});
