import { readdirSync, readFileSync } from 'node:fs';

/**
 * Polls `check` until it answers a value other than `undefined`, and answers that value; for
 * state another process or timer reaches in its own time. Rejects after `timeoutMs`.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 15_000,
  intervalMs = 25,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Whether a process with this pid is alive. A zombie (ended, waiting for its parent to reap it)
 * counts as gone: on a machine whose init does not reap orphans, signal 0 still finds it. Reads the
 * state field of `/proc/<pid>/stat` on Linux; elsewhere falls back to signal 0.
 */
export function alive(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && process.platform === 'linux') return false;
    return signalZeroFinds(pid);
  }
  // The command name in parentheses may hold spaces and parentheses: the state follows the last ')'.
  const state = stat.slice(stat.lastIndexOf(')') + 2)[0];
  return state !== 'Z' && state !== 'X';
}

function signalZeroFinds(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Pids of the running processes whose program name ends in `program` and whose first argument
 * is `firstArg`, read from `/proc` (Linux): for checking that a process a test started through
 * other layers (a jail, a terminal, a script) is gone, e.g. `pidsOf('sleep', '987')`.
 */
export function pidsOf(program: string, firstArg: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv[0]?.endsWith(program) && argv[1] === firstArg) pids.push(Number(entry));
    } catch {
      // The process ended while the directory was read.
    }
  }
  return pids;
}
