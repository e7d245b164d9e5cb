import { SingleBar } from 'cli-progress';

/** What a long command reports as it goes; rendered as a bar with rate and ETA on stderr. */
export interface Progress {
  /** `done` of `total` units so far; `detail` is appended to the line (counts, skipped…). */
  update(done: number, detail?: string): void;
  stop(): void;
}

export interface ProgressSpec {
  label: string;
  total: number;
  /** What `total` counts, shown after the numbers (`places`, `MB`). */
  unit: string;
}

/**
 * A cli-progress bar on stderr: redrawn in place on a terminal, a line every five seconds otherwise
 * (logs of CI or of a piped run stay readable).
 */
export function progressBar(spec: ProgressSpec, stream: NodeJS.WriteStream = process.stderr): Progress {
  const started = Date.now();
  const bar = new SingleBar({
    stream,
    format: `${spec.label} [{bar}] {percentage}% | {value}/{total} ${spec.unit} | {rate} ${spec.unit}/s | ETA {eta_formatted}{detail}`,
    barsize: 24,
    hideCursor: false,
    noTTYOutput: true,
    notTTYSchedule: 5000,
    etaBuffer: 50,
    fps: 5,
  });
  bar.start(spec.total, 0, { rate: 0, detail: '' });
  return {
    update(done, detail) {
      const seconds = Math.max((Date.now() - started) / 1000, 0.001);
      bar.update(done, { rate: Math.round(done / seconds), detail: detail ? ` | ${detail}` : '' });
    },
    stop() {
      bar.stop();
    },
  };
}
