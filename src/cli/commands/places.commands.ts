import { DataSource } from 'typeorm';
import { GeoJsonFormatError } from '../../places/feature-collection-scanner.js';
import { writePlacesFile } from '../../places/place-generator.js';
import { PlaceImporter, PlaceImportError } from '../../places/place-importer.js';
import { CliCommand, CliUsageError, requireString } from '../cli-command.js';

/** One status line on stderr: rewritten in place on a terminal, a line every few seconds otherwise. */
class ProgressLine {
  private lastPrinted = 0;
  private width = 0;

  update(text: string, force = false): void {
    const now = Date.now();
    const tty = process.stderr.isTTY;
    if (!force && now - this.lastPrinted < (tty ? 250 : 5000)) return;
    this.lastPrinted = now;
    if (tty) {
      process.stderr.write(`\r${text.padEnd(this.width)}`);
      this.width = text.length;
    } else {
      process.stderr.write(`${text}\n`);
    }
  }

  done(): void {
    if (process.stderr.isTTY && this.width > 0) process.stderr.write('\n');
    this.width = 0;
  }
}

const positiveInteger = (value: unknown, name: string, usage: string): number => {
  const number = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < 1) {
    throw new CliUsageError(`--${name} must be a positive integer\nusage: ${usage}`);
  }
  return number;
};

const rate = (count: number, ms: number) => Math.round(count / Math.max(ms / 1000, 0.001));
const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export const generatePlacesCommand: CliCommand = {
  name: 'generate-places',
  summary: 'Write a GeoJSON FeatureCollection of synthetic places around real cities (tests, benchmarks)',
  usage: 'generate-places --count N --out FILE [--seed SEED]',
  options: { count: { type: 'string' }, out: { type: 'string' }, seed: { type: 'string' } },
  needsDatabase: false,
  async run(context) {
    const count = positiveInteger(context.values.count, 'count', this.usage);
    const out = requireString(context, 'out', this.usage);
    const seed = (context.values.seed as string | undefined) ?? String(Date.now());
    const progress = new ProgressLine();
    const started = Date.now();
    const { bytes } = await writePlacesFile({
      count,
      out,
      seed,
      onProgress: (written) => {
        const elapsed = Date.now() - started;
        progress.update(`generated ${written}/${count} places (${((100 * written) / count).toFixed(1)}%), ${rate(written, elapsed)}/s`, written === count);
      },
    });
    progress.done();
    const elapsed = Date.now() - started;
    context.out(`wrote ${count} places to ${out} (${megabytes(bytes)}, seed ${seed}) in ${(elapsed / 1000).toFixed(1)} s`);
  },
};

export const importPlacesCommand: CliCommand = {
  name: 'import-places',
  summary: 'Import a GeoJSON FeatureCollection of places as public supplier twins of an organization (idempotent on place_id)',
  usage: 'import-places --organization ORG_ID [--batch-size N] [--provider NAME] [--json] FILE',
  options: {
    organization: { type: 'string' },
    'batch-size': { type: 'string', default: '2000' },
    provider: { type: 'string', default: 'geojson' },
    json: { type: 'boolean', default: false },
  },
  needsDatabase: true,
  async run(context) {
    const organization = requireString(context, 'organization', this.usage);
    const batchSize = positiveInteger(context.values['batch-size'], 'batch-size', this.usage);
    if (context.positionals.length !== 1) throw new CliUsageError(`give exactly one FILE\nusage: ${this.usage}`);
    const file = context.positionals[0];
    const progress = new ProgressLine();
    let skippedPrinted = 0;
    const importer = new PlaceImporter(context.app!.get(DataSource));
    let summary;
    try {
      summary = await importer.importFile(organization, file, {
        batchSize,
        defaultProvider: context.values.provider as string,
        onSkip: ({ index, reason }) => {
          if (skippedPrinted++ >= 1000) return;
          progress.done();
          process.stderr.write(`skipped feature ${index}: ${reason}\n`);
        },
        onProgress: (p) => {
          const percent = ((100 * p.bytesRead) / Math.max(p.totalBytes, 1)).toFixed(1);
          progress.update(`${p.features} features read (${percent}% of ${megabytes(p.totalBytes)}), ${p.written} written, ${p.skipped} skipped, ${rate(p.features, p.elapsedMs)} features/s`);
        },
      });
    } catch (error) {
      progress.done();
      if (error instanceof PlaceImportError || error instanceof GeoJsonFormatError) throw new CliUsageError(`error: ${error.message}`);
      throw error;
    }
    progress.done();
    if (skippedPrinted > 1000) process.stderr.write(`… ${skippedPrinted - 1000} more skipped features not listed\n`);
    if (context.values.json) {
      context.out(JSON.stringify(summary));
      return;
    }
    context.out(
      `imported ${summary.features} features in ${(summary.elapsedMs / 1000).toFixed(1)} s (${rate(summary.features, summary.elapsedMs)} features/s): ` +
        `${summary.inserted} inserted, ${summary.updated} updated, ${summary.unchanged} unchanged, ${summary.duplicates} repeated place ids, ${summary.skipped} skipped`,
    );
  },
};
