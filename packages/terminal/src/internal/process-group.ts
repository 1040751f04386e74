import { readdir, readFile } from 'node:fs/promises';

/** Sends `signal` to a whole process group; a group already gone is fine. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    // ESRCH: no member left.
    return false;
  }
}

/**
 * Whether a member of the group still runs. On Linux `/proc` is read, so zombies (dead,
 * waiting for a parent that may never reap them in a container) count as gone; elsewhere
 * signal 0 answers, zombies included.
 */
export async function groupRunning(pgid: number): Promise<boolean> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return signalGroup(pgid, 0);
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces): state, ppid, pgrp, ...
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
    } catch {
      // Ended while we looked.
    }
  }
  return false;
}

/** SIGKILLs the group until no member runs, for at most `limitMs`; answers whether it is gone. */
export async function killGroup(pgid: number, limitMs: number): Promise<boolean> {
  const until = Date.now() + limitMs;
  for (;;) {
    signalGroup(pgid, 'SIGKILL');
    if (!(await groupRunning(pgid))) return true;
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
