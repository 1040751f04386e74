import { readdirSync, readFileSync } from 'node:fs';

/**
 * Pids of processes whose command line contains `needle` (Linux `/proc`; an empty list
 * elsewhere). The profile directory is unique to one browser, so every Chromium process
 * of that browser (main, zygote, renderers, utility) carries it on its command line.
 */
export function findProcesses(needle: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(needle)) pids.push(Number(entry));
    } catch {
      // The process exited between listing and reading.
    }
  }
  return pids;
}

/** Parent pid of `pid` from `/proc/<pid>/stat`, or undefined. */
export function parentPid(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may contain spaces; the fields after it are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[1]);
  } catch {
    return undefined;
  }
}

/** True while `pid` exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

/** SIGKILL to `pid` and its process group (Playwright starts Chromium as a group leader). */
export function killTree(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // Already gone, or not a group leader.
    }
  }
}
