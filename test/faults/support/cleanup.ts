/**
 * Synchronous last-resort cleanups (kill the service child, stop the throwaway cluster) run when the
 * test process exits or is interrupted without reaching the scenario's own `finally`.
 */
const cleanups = new Set<() => void>();
let installed = false;

export function onProcessExit(cleanup: () => void): () => void {
  if (!installed) {
    installed = true;
    const runAll = () => {
      for (const fn of [...cleanups].reverse()) {
        try {
          fn();
        } catch {
          // best effort
        }
      }
      cleanups.clear();
    };
    process.once('exit', runAll);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.once(signal, () => {
        runAll();
        process.exit(130);
      });
    }
  }
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}
