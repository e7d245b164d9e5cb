import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where every scenario appends its figures as one JSON line (FAULTS_FIGURES overrides). */
export const FIGURES_FILE = process.env.FAULTS_FIGURES ?? join(tmpdir(), 'twin-faults-figures.jsonl');

/**
 * Prints a scenario's figures (even when its assertions then fail) and appends them to FIGURES_FILE,
 * which docs/RELIABILITY.md quotes.
 */
export function reportFigures(scenario: string, figures: Record<string, unknown>): void {
  const lines = Object.entries(figures).map(([key, value]) => `  ${key.padEnd(44)} ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`);
  process.stdout.write(`\n== faults: ${scenario}\n${lines.join('\n')}\n`);
  appendFileSync(FIGURES_FILE, `${JSON.stringify({ scenario, at: new Date().toISOString(), ...figures })}\n`);
}

export const round = (value: number, digits = 0): number => Number(value.toFixed(digits));
