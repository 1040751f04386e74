import { access, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { join } from 'node:path';

/** What one script run may hold at once. */
export interface JailLimits {
  /** Tasks (processes and threads) of the run together; a fork past it fails with EAGAIN. */
  maxProcesses: number;
  /** Memory of the run: all of it in a memory cgroup, else per process (RLIMIT_DATA). */
  maxMemoryBytes: number;
}

/** How the limits were applied, and how to undo what was set up for them. */
export interface LimitedCommand {
  command: string;
  args: string[];
  /** `cgroup`: a pids cgroup (and a memory one when there is) for this run; `rlimit`: prlimit in the jail. */
  mechanism: 'cgroup' | 'rlimit';
  release(): Promise<void>;
}

/** The cgroup directories the daemon may create run groups under (one per controller). */
interface CgroupRoots {
  pids: { dir: string; max: string };
  memory?: { dir: string; max: string } | undefined;
}

let detected: Promise<CgroupRoots | undefined> | undefined;

/**
 * A writable cgroup to put runs under, found once: cgroup v2 when this process's group
 * delegates `pids` (listed in its `cgroup.subtree_control`), else the v1 `pids` (and `memory`)
 * hierarchies at this process's own path. Only root can use them here; undefined otherwise.
 */
function cgroupRoots(): Promise<CgroupRoots | undefined> {
  detected ??= findCgroupRoots().catch(() => undefined);
  return detected;
}

async function findCgroupRoots(): Promise<CgroupRoots | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const lines = (await readFile('/proc/self/cgroup', 'utf8')).split('\n');
  const pathOf = (controller: string) =>
    lines.map((line) => line.split(':')).find(([, list]) => list?.split(',').includes(controller))?.[2];
  const unified = lines.map((line) => line.split(':')).find(([id, list]) => id === '0' && list === '')?.[2];
  if (unified !== undefined) {
    const dir = join('/sys/fs/cgroup', unified);
    const delegated = await readFile(join(dir, 'cgroup.subtree_control'), 'utf8').catch(() => '');
    if (delegated.split(/\s+/).includes('pids') && (await writable(dir)))
      return {
        pids: { dir, max: 'pids.max' },
        memory: delegated.split(/\s+/).includes('memory') ? { dir, max: 'memory.max' } : undefined,
      };
  }
  const pids = pathOf('pids');
  if (pids === undefined) return undefined;
  const pidsDir = join('/sys/fs/cgroup/pids', pids);
  if (!(await writable(pidsDir))) return undefined;
  const memory = pathOf('memory');
  const memoryDir = memory === undefined ? undefined : join('/sys/fs/cgroup/memory', memory);
  return {
    pids: { dir: pidsDir, max: 'pids.max' },
    memory:
      memoryDir && (await writable(memoryDir)) ? { dir: memoryDir, max: 'memory.limit_in_bytes' } : undefined,
  };
}

const writable = (dir: string) =>
  access(join(dir, 'cgroup.procs'), constants.W_OK).then(
    () => true,
    () => false,
  );

/**
 * The command that runs bubblewrap (`bwrapPath`, `args` ending in `-- <program> ...`) under
 * `limits`. As root with a writable pids cgroup: a cgroup per run (`pids.max`, and the memory
 * limit when a memory controller is there), entered by a shell before it executes bwrap, so
 * nothing of the run starts outside it. Otherwise (a normal user): `prlimit` inside the jail
 * sets RLIMIT_NPROC and RLIMIT_DATA on the program; in the jail's user namespace the process
 * count is the run's own. Root is exempt from RLIMIT_NPROC: without a cgroup, a root daemon's
 * runs have the memory limit only (the README says so).
 */
export async function limitedCommand(
  bwrapPath: string,
  args: readonly string[],
  limits: JailLimits,
  runId: string,
): Promise<LimitedCommand> {
  // Always, inside the jail: RLIMIT_NPROC counts the run's own tasks there (its user namespace)
  // and RLIMIT_DATA bounds each process's memory.
  const separator = args.lastIndexOf('--');
  const prlimit = [
    '/usr/bin/prlimit',
    `--nproc=${limits.maxProcesses}:${limits.maxProcesses}`,
    `--data=${limits.maxMemoryBytes}:${limits.maxMemoryBytes}`,
    '--',
  ];
  const jailed = [...args.slice(0, separator + 1), ...prlimit, ...args.slice(separator + 1)];
  const roots = await cgroupRoots();
  const groups = roots ? await makeGroups(roots, limits, runId).catch(() => undefined) : undefined;
  if (!groups) return { command: bwrapPath, args: jailed, mechanism: 'rlimit', release: async () => {} };
  // $1 is how many cgroup.procs files follow; the shell writes its pid to each, then execs.
  const enter =
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"';
  const procs = groups.map((dir) => join(dir, 'cgroup.procs'));
  return {
    command: '/bin/sh',
    args: ['-c', enter, 'agentd-jail', String(procs.length), ...procs, bwrapPath, ...jailed],
    mechanism: 'cgroup',
    release: () => removeGroups(groups),
  };
}

async function makeGroups(roots: CgroupRoots, limits: JailLimits, runId: string): Promise<string[]> {
  const name = `agentd-${runId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  const pids = join(roots.pids.dir, name);
  await mkdir(pids);
  const made = [pids];
  try {
    await writeFile(join(pids, roots.pids.max), String(limits.maxProcesses));
    if (roots.memory) {
      const memory = join(roots.memory.dir, name);
      if (memory !== pids) {
        await mkdir(memory);
        made.push(memory);
      }
      await writeFile(join(memory, roots.memory.max), String(limits.maxMemoryBytes));
    }
    return made;
  } catch (error) {
    await removeGroups(made);
    throw error;
  }
}

/** Removes a run's cgroups once its processes are gone (they die with bwrap, within moments). */
async function removeGroups(dirs: string[]): Promise<void> {
  for (const dir of dirs) {
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const removed = await rmdir(dir).then(
        () => true,
        (error: NodeJS.ErrnoException) => error.code === 'ENOENT',
      );
      if (removed) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
