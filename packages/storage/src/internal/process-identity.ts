import { readFileSync } from 'node:fs';

/** True while a process with this pid exists (also when it belongs to another user). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, we may just not signal it.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The kernel's start time of a process (clock ticks since boot, field 22 of
 * `/proc/<pid>/stat`), or `undefined` where there is no /proc (macOS) or no such process.
 * Together with the pid it names one process: a pid reused after a crash has another start.
 */
export function processStartTime(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces or ')'; count from the last one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state), so field 22 is fields[19].
  const start = fields[19];
  return start && /^\d+$/.test(start) ? start : undefined;
}
