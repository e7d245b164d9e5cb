import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { Sql } from '../../database/sql.js';
import { EventBus } from '../../events/event-bus.js';
import { writePlacesFile } from '../../places/place-generator.js';
import { PlaceImporter } from '../../places/place-importer.js';
import { CliCommand, CliUsageError, numberOption, requireString, uuidOption } from '../cli-command.js';
import type { Progress } from '../progress.js';

const rate = (count: number, ms: number) => Math.round(count / Math.max(ms / 1000, 0.001));
const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const MB = 1024 * 1024;

export const generatePlacesCommand: CliCommand = {
  name: 'generate-places',
  summary: 'Write a GeoJSON FeatureCollection of synthetic places around real cities (tests, benchmarks)',
  usage: 'generate-places --count N --out FILE [--seed SEED]',
  options: {
    count: { type: 'string', value: 'N', description: 'how many places (required)' },
    out: { type: 'string', value: 'FILE', description: 'the file to write (required)' },
    seed: { type: 'string', value: 'SEED', description: 'the same seed gives the same file (default: the time)' },
  },
  examples: ['generate-places --count 1000 --out places.geojson --seed 42', 'generate-places --count 1000000 --out /tmp/places-1m.geojson'],
  needsDatabase: false,
  async run(context) {
    const count = numberOption(context, 'count', { min: 1, integer: true });
    const out = resolve(context.cwd, requireString(context, 'out'));
    const seed = (context.values.seed as string | undefined) ?? String(Date.now());
    const progress = context.progress({ label: 'generating', total: count, unit: 'places' });
    const started = Date.now();
    let bytes: number;
    try {
      ({ bytes } = await writePlacesFile({ count, out, seed, onProgress: (written) => progress.update(written) }));
    } finally {
      progress.stop();
    }
    const elapsed = Date.now() - started;
    context.out(`wrote ${count} places to ${out} (${megabytes(bytes)}, seed ${seed}) in ${(elapsed / 1000).toFixed(1)} s`);
  },
};

export const importPlacesCommand: CliCommand = {
  name: 'import-places',
  summary: 'Import a GeoJSON FeatureCollection of places as public supplier twins of an organization (idempotent on place_id)',
  usage: 'import-places --organization ORG_ID [--batch-size N] [--provider NAME] [--json] FILE',
  options: {
    organization: { type: 'string', value: 'ORG_ID', description: 'the organization that owns the imported twins (required)' },
    'batch-size': { type: 'string', default: '2000', value: 'N', description: 'features per INSERT' },
    provider: { type: 'string', default: 'geojson', value: 'NAME', description: 'provider of features that name none' },
    json: { type: 'boolean', default: false, description: 'print the summary as one JSON object' },
  },
  examples: ['import-places --organization ORG_ID places.geojson', 'import-places --organization ORG_ID --batch-size 5000 --json /tmp/places-1m.geojson'],
  needsDatabase: true,
  async run(context) {
    // What the call itself gets wrong is exit 2; what the import finds (an organization that does not exist,
    // a file that is not a FeatureCollection) fails it: exit 1, as for every command.
    const organization = uuidOption(context, 'organization', 'an organization');
    const batchSize = numberOption(context, 'batch-size', { min: 1, integer: true });
    if (context.positionals.length !== 1) throw new CliUsageError(`give exactly one FILE, got ${context.positionals.length}`);
    const file = resolve(context.cwd, context.positionals[0]);
    let total: number;
    try {
      total = statSync(file).size;
    } catch {
      throw new CliUsageError(`cannot read ${file}`);
    }
    let skippedPrinted = 0;
    const importer = new PlaceImporter(context.app!.get(Sql), context.app!.get(EventBus).channel);
    // The file is read as a stream of bytes: progress in megabytes of it, with features counted beside. The bar
    // starts with the first progress, so an import refused at once (no such organization) is one line.
    let progress: Progress | undefined;
    let summary;
    try {
      summary = await importer.importFile(organization, file, {
        batchSize,
        defaultProvider: context.values.provider as string,
        onSkip: ({ index, reason }) => {
          if (skippedPrinted++ < 1000) context.warn(`skipped feature ${index}: ${reason}`);
        },
        onProgress: (p) => {
          progress ??= context.progress({ label: 'importing', total: Math.max(1, Math.round(total / MB)), unit: 'MB' });
          progress.update(Math.round(p.bytesRead / MB), `${p.features} features, ${p.written} written, ${p.skipped} skipped, ${rate(p.features, p.elapsedMs)} features/s`);
        },
      });
    } finally {
      progress?.stop();
    }
    if (skippedPrinted > 1000) context.warn(`… ${skippedPrinted - 1000} more skipped features not listed`);
    if (context.values.json) {
      context.out(JSON.stringify(summary));
      return;
    }
    context.out(
      `imported ${summary.features} features in ${(summary.elapsedMs / 1000).toFixed(1)} s (${rate(summary.features, summary.elapsedMs)} features/s): ` +
        `${summary.inserted} inserted, ${summary.updated} updated, ${summary.unchanged} unchanged, ${summary.duplicates} repeated place ids, ${summary.skipped} skipped` +
        (summary.crossings ? `, ${summary.crossings} geofence crossings` : ''),
    );
  },
};
