/**
 * The memory a newcomer's start command really costs: the resident memory of the whole process
 * tree it leaves running (a launcher that stays beside the daemon counts), not only the daemon's.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A start command left running in its own process group. */
export interface StartedTree {
  /** The pid of the command itself (the group leader). */
  pid: number;
  /** Resident memory of the command and every process below it, MB. */
  rssMb(): number;
  /** How many processes the tree holds now. */
  size(): number;
  /** SIGTERM to the whole group, then removes the data directory. */
  stop(): Promise<void>;
}

/** Every pid below `root` (itself included), from the parent links in `/proc/<pid>/stat`. */
export function treePids(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // exited while listing
    }
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(parent) ?? [];
    list.push(Number(name));
    children.set(parent, list);
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    found.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

function rssKb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * Runs `command` (a shell line in `cwd`, exec'd so the measuring shell is not counted) with
 * `--data-dir <fresh> --port 0` appended, and resolves once the daemon logs that it listens.
 */
export async function startTree(
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  config: string,
): Promise<StartedTree> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentd-bench-tree-'));
  writeFileSync(join(dataDir, 'config.yaml'), config);
  const child = spawn('sh', ['-c', `exec ${command} --data-dir '${dataDir}' --port 0`], {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`${command} did not start: ${text}`)), 120_000);
    const look = (chunk: Buffer) => {
      text += chunk;
      if (/agentd listening on/.test(text)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.once('exit', (code) => reject(new Error(`${command} exited ${code}: ${text}`)));
  });
  const pid = child.pid as number;
  return {
    pid,
    rssMb: () => treePids(pid).reduce((sum, each) => sum + rssKb(each), 0) / 1024,
    size: () => treePids(pid).length,
    stop: async () => {
      try {
        process.kill(-pid, 'SIGTERM');
      } catch {
        // already gone
      }
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
