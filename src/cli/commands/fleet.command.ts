import { FleetSimulator } from '../fleet/fleet-simulator.js';
import { CliCommand, CliContext, CliUsageError, numberOption, requireString, uuidOption } from '../cli-command.js';
import type { Progress } from '../progress.js';

function centerOption(context: CliContext): [number, number] {
  const raw = requireString(context, 'center');
  const [lon, lat, ...rest] = raw.split(',').map(Number);
  if (rest.length > 0 || !(Math.abs(lon) <= 180) || !(Math.abs(lat) <= 85)) throw new CliUsageError(`--center must be LON,LAT in degrees (|lat| ≤ 85), got "${raw}"`);
  return [lon, lat];
}

export const simulateFleetCommand: CliCommand = {
  name: 'simulate-fleet',
  summary: "Move twins of an organization along plausible paths, as a fleet's devices would, through the positions route (demos, load)",
  usage: 'simulate-fleet --organization ORG_ID --token TOKEN [--twins N] [--seconds S] [--interval S] [--batch N] [--speed M/S] [--url URL] [--json]',
  options: {
    organization: { type: 'string', value: 'ORG_ID', description: 'the organization whose twins move (required)' },
    token: { type: 'string', value: 'TOKEN', description: 'an access token of an account in it (required; or TWIN_TOKEN in the environment)' },
    twins: { type: 'string', default: '10', value: 'N', description: "how many of the organization's twins move (the first N of GET /my/twins/)" },
    seconds: { type: 'string', default: '60', value: 'S', description: 'how long they move' },
    interval: { type: 'string', default: '1', value: 'S', description: 'seconds between two positions of a twin' },
    batch: { type: 'string', default: '1', value: 'N', description: 'positions an upload carries (1: each as it is taken; up to 1000)' },
    speed: { type: 'string', default: '8', value: 'M/S', description: 'usual speed of a vehicle, metres per second (each vehicle 0.6-1.4 times it)' },
    center: { type: 'string', default: '2.3522,48.8566', value: 'LON,LAT', description: 'where twins with no location start (within ~2 km of it)' },
    seed: { type: 'string', value: 'SEED', description: 'the same seed draws the same paths (default: the time)' },
    url: { type: 'string', value: 'URL', description: "the service's address (default: PUBLIC_URL, or localhost and PORT)" },
    json: { type: 'boolean', default: false, description: 'print the summary as one JSON object' },
  },
  examples: [
    'simulate-fleet --organization ORG_ID --token TOKEN --twins 20 --seconds 120',
    'simulate-fleet --organization ORG_ID --token TOKEN --twins 500 --interval 1 --batch 10 --url http://localhost:3000',
  ],
  needsDatabase: false,
  async run(context) {
    const organization = uuidOption(context, 'organization', 'an organization');
    const token = typeof context.values.token === 'string' ? context.values.token : process.env.TWIN_TOKEN;
    if (!token) throw new CliUsageError('--token is required (or TWIN_TOKEN in the environment)');
    const twins = numberOption(context, 'twins', { min: 1, max: 100_000, integer: true });
    const seconds = numberOption(context, 'seconds', { min: 0.1, max: 7 * 86_400 });
    const interval = numberOption(context, 'interval', { min: 0.05, max: 3600 });
    const batch = numberOption(context, 'batch', { min: 1, max: 1000, integer: true });
    const speed = numberOption(context, 'speed', { min: 0, max: 350 });
    const seed = context.values.seed === undefined ? Date.now() % 2 ** 31 : numberOption(context, 'seed', { min: 0, max: 2 ** 31 - 1, integer: true });
    const url = ((context.values.url as string | undefined) ?? context.baseUrl).replace(/\/+$/, '');
    const total = twins * Math.max(1, Math.floor(seconds / interval));
    let progress: Progress | undefined;
    const simulator = new FleetSimulator({ url, token, organization, twins, seconds, interval, batch, speed, center: centerOption(context), seed }, (p) => {
      progress ??= context.progress({ label: 'moving', total, unit: 'positions' });
      progress.update(p.positions, `${p.uploads} uploads${p.failed ? `, ${p.failed} refused` : ''}`);
    });
    let summary;
    try {
      summary = await simulator.run();
    } finally {
      progress?.stop();
    }
    if (context.values.json) {
      context.out(JSON.stringify({ ...summary, seed }));
    } else {
      const refusals = Object.entries(summary.refusals).map(([reason, count]) => `${count} × ${reason}`);
      context.out(
        `moved ${summary.twins} twins for ${(summary.elapsedMs / 1000).toFixed(1)} s: ${summary.positions} positions stored in ${summary.uploads} uploads ` +
          `(p50 ${summary.p50Ms} ms, p99 ${summary.p99Ms} ms), ${summary.retried} waited out (429/503), ${summary.failed} refused` +
          (refusals.length ? ` (${refusals.join(', ')}; ${summary.dropped} positions dropped)` : '') +
          `; seed ${seed}`,
      );
    }
    if (summary.positions === 0) throw new Error('no upload was stored');
  },
};
