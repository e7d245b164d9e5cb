import { existsSync } from 'node:fs';

const SETPRIV = '/usr/bin/setpriv';

/**
 * The command line that runs `file` so that the kernel sends it `signal` when the test process dies,
 * however it dies (`prctl(PR_SET_PDEATHSIG)` through util-linux's `setpriv`, which then execs `file`:
 * same pid). The exit and signal hooks of cleanup.ts do not fire inside Jest — a test file's `process`
 * is Jest's copy, with its own listeners that the real process never calls — so an interrupted or
 * killed run would otherwise leave the child behind, holding its port. Without setpriv (not Linux),
 * the command as it is.
 */
export function dyingWithParent(file: string, args: string[], signal: 'KILL' | 'TERM'): [string, string[]] {
  if (!existsSync(SETPRIV)) return [file, args];
  return [SETPRIV, ['--pdeathsig', signal, '--', file, ...args]];
}
