import type { AddressInfo } from 'node:net';
import { simulateFleetCommand } from '../../src/cli/commands/fleet.command';
import { CliUsageError, parseCommandArgs, type CliContext } from '../../src/cli/cli-command';
import type { ProgressSpec } from '../../src/cli/progress';
import { distanceMetres } from '../../src/cli/fleet/fleet-walk';
import { TestApp, TestTenant } from '../support/test-app';

/**
 * `simulate-fleet` (src/cli/commands/fleet.command.ts) against the service over HTTP: the twins move
 * through the positions route, every position taken is stored in order, each twin ends at its newest.
 */
describe('simulate-fleet', () => {
  let service: TestApp;
  let fleet: TestTenant;
  let base: string;

  beforeAll(async () => {
    service = await TestApp.start({ RATE_LIMIT_MAX: '0' });
    await service.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(service.app.getHttpServer().address() as AddressInfo).port}`;
    fleet = await service.tenant({ organization: 'Simulated fleet', twin: 'Van 1' });
  });
  afterAll(() => service.close());

  /** Runs the command as `npm run cli -- simulate-fleet …` would, collecting what it prints. */
  async function simulate(args: string[]) {
    const { values, positionals } = parseCommandArgs(simulateFleetCommand, args);
    const out: string[] = [];
    const progress: { spec: ProgressSpec; updates: number; stopped: boolean }[] = [];
    const context: CliContext = {
      values,
      positionals,
      cwd: process.cwd(),
      baseUrl: base,
      out: (line) => out.push(line),
      warn: () => {},
      progress: (spec) => {
        const bar = { spec, updates: 0, stopped: false };
        progress.push(bar);
        return { update: () => bar.updates++, stop: () => (bar.stopped = true) };
      },
    };
    await simulateFleetCommand.run(context);
    return { out, progress };
  }

  /** The positions the simulator sent (with a speed: a location set by a create has none). */
  const track = async (twin: string) =>
    (
      (await service.inject({ method: 'GET', url: `/twins/${twin}/track`, headers: fleet.headers() })).json().features as {
        geometry: { coordinates: [number, number] };
        properties: { occurred: string; speed: number | null; heading: number | null };
      }[]
    ).filter((feature) => feature.properties.speed !== null);

  it('moves the first N twins of the organization along their paths, every position stored, each twin at its newest', async () => {
    const located = await service.createTwin(fleet, { name: 'Van 2', location: { type: 'Point', coordinates: [13.4, 52.52] } });
    await service.createTwin(fleet, { name: 'Van 3' });
    const { out, progress } = await simulate(['--organization', fleet.organizationId, '--token', fleet.token, '--twins', '3', '--seconds', '2', '--interval', '0.25', '--batch', '2', '--seed', '11', '--json']);
    const summary = JSON.parse(out[0]);
    expect(summary).toEqual(expect.objectContaining({ twins: 3, positions: 24, failed: 0, dropped: 0, retried: 0, refusals: {}, seed: 11 }));
    // Two positions an upload, or more where the one before was still in flight (a slow machine).
    expect(summary.uploads).toBeGreaterThanOrEqual(3);
    expect(summary.uploads).toBeLessThanOrEqual(12);
    expect(progress).toEqual([expect.objectContaining({ spec: { label: 'moving', total: 24, unit: 'positions' }, stopped: true })]);
    expect(progress[0].updates).toBe(summary.uploads);

    const listed = (await service.inject({ method: 'GET', url: '/my/twins/?page_size=100&page_after=', headers: fleet.headers() })).json().data as { id: string }[];
    expect(listed).toHaveLength(3);
    for (const { id } of listed) {
      const features = await track(id);
      expect(features).toHaveLength(8);
      const times = features.map((f) => f.properties.occurred);
      expect([...times].sort()).toEqual(times);
      // Plausible: no step longer than its speed allows (0.25 s at ≤ 1.4 × 1.5 × 8 m/s), and the twin at the last.
      features.slice(1).forEach((f, i) => expect(distanceMetres(pointOf(features[i]), pointOf(f))).toBeLessThanOrEqual(f.properties.speed! * 0.25 * 1.01 + 0.05));
      const detail = (await service.inject({ method: 'GET', url: `/twins/${id}/`, headers: fleet.headers() })).json().data;
      expect(detail.attributes.location.coordinates).toEqual(features[features.length - 1].geometry.coordinates);
    }
    // A twin with a location starts from it.
    const first = (await track(located))[0];
    expect(distanceMetres({ lon: 13.4, lat: 52.52 }, pointOf(first))).toBeLessThan(20);
  });

  it('refuses what it cannot do, before moving anything', async () => {
    await expect(simulate(['--organization', fleet.organizationId, '--token', 'tw_not_a_token', '--seconds', '1'])).rejects.toThrow(/answered 401/);
    await expect(simulate(['--organization', fleet.organizationId, '--token', fleet.token, '--twins', '1000', '--seconds', '1'])).rejects.toThrow(/fewer than --twins 1000/);
    await expect(simulate(['--organization', 'not-a-uuid', '--token', fleet.token])).rejects.toThrow(CliUsageError);
    await expect(simulate(['--organization', fleet.organizationId, '--token', fleet.token, '--batch', '1001'])).rejects.toThrow(/--batch must be an integer from 1 to 1000/);
    await expect(simulate(['--organization', fleet.organizationId, '--token', fleet.token, '--center', '200,10'])).rejects.toThrow(/--center/);
  });
});

const pointOf = (feature: { geometry: { coordinates: [number, number] } }) => ({ lon: feature.geometry.coordinates[0], lat: feature.geometry.coordinates[1] });
