import { lstatSync, readlinkSync } from 'node:fs';

/** Where things appear inside the jail. */
export const JAIL_PATHS = {
  workspace: '/workspace',
  dir: '/agentd',
  script: '/agentd/script.mjs',
  client: '/agentd/orch.mjs',
  socket: '/agentd/orch.sock',
} as const;

/** The environment variable naming the capability socket (the contract: ends in `_ORCH_SOCKET`). */
export const SOCKET_ENV = 'AGENTD_ORCH_SOCKET';
/** The environment variable holding the per-run child lease secret. */
export const LEASE_ENV = 'AGENTD_ORCH_LEASE';
/** The environment variable naming the child lease (attribution only, not a secret). */
export const LEASE_ID_ENV = 'AGENTD_ORCH_LEASE_ID';

/** Host files a jailed Node process needs from `/etc`; never the whole directory (`/etc/shadow`). */
const ETC_FILES = [
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/ssl/certs',
  '/etc/ca-certificates',
];

/** Top-level system directories mounted read-only (or recreated as the symlinks they are). */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** The host paths one jail binds. */
export interface JailMounts {
  /** The agent's workspace: the only writable host path. */
  workspace: string;
  /** The script (already plain JavaScript), read-only. */
  script: string;
  /** The client module, read-only. */
  client: string;
  /** The capability socket. */
  socket: string;
  /** The Node binary. */
  node: string;
}

/**
 * The bubblewrap command line of one script run: every namespace unshared (so no network but
 * a private loopback), the jail dies with the daemon, the system directories read-only, the
 * root read-only, a tmpfs `/tmp`, the workspace the one writable bind, and nothing else of the
 * host (the data directory, `/root`, `/home`, most of `/etc` are simply absent).
 */
export function bwrapArgs(mounts: JailMounts): string[] {
  const args = systemJailArgs();
  // A Node outside the system directories (nvm, a tarball) is bound at its own path.
  if (!SYSTEM_DIRS.some((dir) => mounts.node.startsWith(`${dir}/`))) {
    args.push('--ro-bind', mounts.node, mounts.node);
  }
  args.push(
    '--bind',
    mounts.workspace,
    JAIL_PATHS.workspace,
    '--ro-bind',
    mounts.script,
    JAIL_PATHS.script,
    '--ro-bind',
    mounts.client,
    JAIL_PATHS.client,
    '--bind',
    mounts.socket,
    JAIL_PATHS.socket,
    '--remount-ro',
    '/',
    '--chdir',
    JAIL_PATHS.workspace,
    '--',
    mounts.node,
    JAIL_PATHS.script,
  );
  return args;
}

/**
 * The part of every jail's command line that is not about the script: namespaces, the system
 * directories read-only, the few `/etc` files, `/proc`, `/dev` and a tmpfs `/tmp`. The
 * builtins that run a system tool over the workspace (grep) use it with the workspace read-only.
 */
export function systemJailArgs(): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--cap-drop', 'ALL'];
  for (const dir of SYSTEM_DIRS) {
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(dir);
    } catch {
      continue;
    }
    // Merged-/usr systems have /bin -> usr/bin: recreate the link rather than bind its target twice.
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir);
    else if (stat.isDirectory()) args.push('--ro-bind', dir, dir);
  }
  for (const file of ETC_FILES) args.push('--ro-bind-try', file, file);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  return args;
}

/** Names of variables that must never reach a script: keys, tokens, secrets, passwords, credentials. */
const SECRET_NAME = /key|token|secret|passw|pwd|credential|auth|cookie|session|private/i;
/** Variables that would make the jailed Node load host code or certificates the jail lacks. */
const NODE_LOADERS = new Set([
  'NODE_OPTIONS',
  'NODE_PATH',
  'NODE_EXTRA_CA_CERTS',
  'NODE_REPL_EXTERNAL_MODULE',
]);

/**
 * The jail's environment: the daemon's, minus anything named like a secret and Node's loader
 * variables, with `HOME` and `TMPDIR` pointed inside the jail, plus `extra` (the socket and lease).
 */
export function jailEnv(base: NodeJS.ProcessEnv, extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined || SECRET_NAME.test(name) || NODE_LOADERS.has(name)) continue;
    // The daemon's own variables name its data directory and settings: none of the script's business.
    if (name.startsWith('AGENTD_')) continue;
    env[name] = value;
  }
  env.HOME = JAIL_PATHS.workspace;
  env.TMPDIR = '/tmp';
  env.PATH = '/usr/local/bin:/usr/bin:/bin';
  return { ...env, ...extra };
}
