import fc from 'fast-check';
import { distanceMetres, FleetWalker } from '../../src/cli/fleet/fleet-walk';
import { Prng } from '../../src/places/prng';

/** The simulator's walk (simulate-fleet): steps as long as the speed says, on the map, repeatable by seed. */
describe('fleet walk', () => {
  it('moves each step by its speed times the interval, the speed within half and one and a half of the cruise, always on the map', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.double({ min: -179.9, max: 179.9, noNaN: true }),
        fc.double({ min: -84, max: 84, noNaN: true }),
        fc.double({ min: 0.5, max: 60, noNaN: true }),
        fc.double({ min: 0.1, max: 30, noNaN: true }),
        (seed, lon, lat, cruise, seconds) => {
          const walker = new FleetWalker(lon, lat, cruise, new Prng(seed));
          let at = { lon, lat };
          for (let i = 0; i < 50; i++) {
            const next = walker.step(seconds);
            expect(next.speed).toBeGreaterThanOrEqual(0.5 * cruise - 0.01);
            expect(next.speed).toBeLessThanOrEqual(1.5 * cruise + 0.01);
            expect(Math.abs(next.lat)).toBeLessThanOrEqual(84.0001);
            expect(Math.abs(next.lon)).toBeLessThanOrEqual(180);
            expect(next.heading).toBeGreaterThanOrEqual(0);
            expect(next.heading).toBeLessThan(360);
            // Never longer than the speed allows: the speed as answered (to the centimetre a second), within the
            // flat step's 1 % near the poles (a step turned back from a pole stays where it was in latitude).
            const travelled = distanceMetres(at, next);
            expect(travelled).toBeLessThanOrEqual((next.speed + 0.005) * seconds * 1.01 + 0.05);
            at = next;
          }
        },
      ),
    );
  });

  it('goes straight on for the most part, away from where it started', () => {
    const walker = new FleetWalker(2.35, 48.85, 10, new Prng(7));
    const path = Array.from({ length: 120 }, () => walker.step(1));
    const end = path[path.length - 1];
    const straight = distanceMetres({ lon: 2.35, lat: 48.85 }, end);
    const travelled = path.reduce((sum, p, i) => sum + distanceMetres(i === 0 ? { lon: 2.35, lat: 48.85 } : path[i - 1], p), 0);
    expect(travelled).toBeGreaterThan(600);
    expect(straight).toBeGreaterThan(travelled / 10);
  });

  it('draws the same path from the same seed, and another from another', () => {
    const path = (seed: number) => {
      const walker = new FleetWalker(13.4, 52.5, 8, new Prng(seed));
      return Array.from({ length: 20 }, () => walker.step(2));
    };
    expect(path(42)).toEqual(path(42));
    expect(path(42)).not.toEqual(path(43));
  });
});
