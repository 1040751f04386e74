import { firstIssueText } from '@agentd/errors';
import { spawn } from 'node:child_process';
import { readdir, realpath } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { JAIL_PATHS, systemJailArgs } from './jail.js';
import type { WebSearchSettings } from '../config.js';
import { BuiltinRefusal } from './builtins-refusal.js';
import { handlePath, isInside, openInside } from './safe-fs.js';
import { webSearch } from './web-search.js';

export { BuiltinRefusal };

/** What a builtin needs from the call: the workspace root, a signal, the web fetcher and search, bwrap. */
export interface BuiltinContext {
  root: string;
  /** The bubblewrap binary grep runs under (it walks the workspace itself, so it walks it jailed). */
  bwrapPath: string;
  signal: AbortSignal;
  webFetch: ((url: string, signal: AbortSignal) => Promise<unknown>) | undefined;
  /** The SearXNG endpoint of `web_search` (`orchestrate.webSearch`); unset: the builtin refuses. */
  webSearch?: WebSearchSettings | undefined;
}

const path = z.string().max(4096).default('.');
const MAX_READ = 4 * 1024 * 1024;
const PROCESS_TIMEOUT_MS = 10_000;
const PROCESS_OUTPUT = 1024 * 1024;

/** The builtins' params, validated before they run. */
const schemas = {
  read: z.strictObject({
    path: z.string().min(1).max(4096),
    offset: z.number().int().min(0).default(0),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_READ)
      .default(256 * 1024),
  }),
  ls: z.strictObject({ path }),
  find: z.strictObject({
    path,
    name: z.string().min(1).max(200).optional(),
    maxResults: z.number().int().min(1).max(5000).default(500),
  }),
  grep: z.strictObject({
    pattern: z.string().min(1).max(500),
    path,
    ignoreCase: z.boolean().default(false),
    maxMatches: z.number().int().min(1).max(2000).default(200),
  }),
  jq: z.strictObject({ filter: z.string().min(1).max(4000), path: z.string().min(1).max(4096) }),
  web_fetch: z.strictObject({ url: z.string().min(1).max(4096) }),
  web_search: z.strictObject({
    query: z.string().trim().min(1).max(500),
    maxResults: z.number().int().min(1).max(50).optional(),
  }),
};

/** The in-process builtins' names (the capability socket routes these without the tool runner). */
export const BUILTIN_NAMES = Object.keys(schemas) as Array<keyof typeof schemas>;

/** Whether `name` is a builtin. */
export function isBuiltin(name: string): name is keyof typeof schemas {
  return Object.hasOwn(schemas, name);
}

/**
 * Resolves a script-supplied path (relative, or under `/workspace` as the script sees it) to a
 * host path inside the workspace, following symlinks first so none can lead out of it.
 */
export async function confine(
  root: string,
  input: string,
): Promise<{ host: string; shown: string; realRoot: string }> {
  let wanted = input;
  if (wanted === JAIL_PATHS.workspace || wanted.startsWith(`${JAIL_PATHS.workspace}/`)) {
    wanted = `.${wanted.slice(JAIL_PATHS.workspace.length)}`;
  }
  if (isAbsolute(wanted) || wanted.includes('\0')) {
    throw new BuiltinRefusal('path must be relative to the workspace (or under /workspace)');
  }
  let realRoot: string;
  let target: string;
  try {
    realRoot = await realpath(root);
    target = await realpath(resolve(realRoot, wanted));
  } catch {
    throw new BuiltinRefusal(`path does not exist in the workspace: ${input.slice(0, 200)}`);
  }
  if (!isInside(realRoot, target)) throw new BuiltinRefusal('path resolves outside the workspace');
  const shown = target === realRoot ? '.' : target.slice(realRoot.length + 1);
  return { host: target, shown, realRoot };
}

/** Opens a confined path (see {@link openInside}); refuses what is not the kind asked for. */
async function openConfined(root: string, input: string, kind: 'file' | 'dir') {
  const { host, shown, realRoot } = await confine(root, input);
  const handle = await openInside(realRoot, host, kind);
  if (!handle)
    throw new BuiltinRefusal(`not a ${kind === 'dir' ? 'directory' : 'file'} in the workspace: ${shown}`);
  return { handle, shown, realRoot };
}

/** Runs builtin `name` with `params`; a refusal or bad params throws {@link BuiltinRefusal}. */
export async function runBuiltin(
  name: keyof typeof schemas,
  params: unknown,
  ctx: BuiltinContext,
): Promise<unknown> {
  const checked = schemas[name].safeParse(params ?? {});
  if (!checked.success) throw new BuiltinRefusal(firstIssueText('args.', checked.error.issues));
  // biome-ignore lint/suspicious/noExplicitAny: each case reads the shape its own schema parsed
  const args = checked.data as any;
  switch (name) {
    case 'read':
      return read(ctx, args);
    case 'ls':
      return list(ctx, args);
    case 'find':
      return find(ctx, args);
    case 'grep':
      return grep(ctx, args);
    case 'jq':
      return jq(ctx, args);
    case 'web_fetch':
      if (!ctx.webFetch) throw new BuiltinRefusal('web fetch is not configured');
      return ctx.webFetch(args.url, ctx.signal);
    case 'web_search':
      return webSearch(ctx.webSearch, args, ctx.signal);
  }
}

async function read(ctx: BuiltinContext, args: z.infer<typeof schemas.read>) {
  const { handle, shown } = await openConfined(ctx.root, args.path, 'file');
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new BuiltinRefusal(`not a file: ${shown}`);
    const buffer = Buffer.alloc(Math.max(0, Math.min(args.limit, info.size - args.offset)));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, args.offset);
    return {
      path: shown,
      size: info.size,
      text: buffer.subarray(0, bytesRead).toString('utf8'),
      truncated: args.offset + bytesRead < info.size,
    };
  } finally {
    await handle.close();
  }
}

async function list(ctx: BuiltinContext, args: z.infer<typeof schemas.ls>) {
  const { handle, shown } = await openConfined(ctx.root, args.path, 'dir');
  try {
    const entries = await readdir(handlePath(handle), { withFileTypes: true });
    return {
      path: shown,
      entries: entries.slice(0, 5000).map((entry) => ({
        name: entry.name,
        type: entry.isDirectory()
          ? 'dir'
          : entry.isSymbolicLink()
            ? 'link'
            : entry.isFile()
              ? 'file'
              : 'other',
      })),
    };
  } finally {
    await handle.close();
  }
}

/** A `*`/`?` name pattern as a regular expression (everything else literal). */
function globRegex(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

async function find(ctx: BuiltinContext, args: z.infer<typeof schemas.find>) {
  const { host, shown, realRoot } = await confine(ctx.root, args.path);
  const match = args.name ? globRegex(args.name) : undefined;
  const found: string[] = [];
  // Breadth first; each directory is opened without following symlinks and checked on the
  // open handle, so the walk stays inside the workspace even while the script changes it.
  const queue: Array<{ dir: string; rel: string; depth: number }> = [{ dir: host, rel: shown, depth: 0 }];
  while (queue.length > 0 && found.length < args.maxResults) {
    if (ctx.signal.aborted) break;
    const { dir, rel, depth } = queue.shift() as { dir: string; rel: string; depth: number };
    const handle = await openInside(realRoot, dir, 'dir');
    if (!handle) continue;
    const entries = await readdir(handlePath(handle), { withFileTypes: true }).catch(() => []);
    await handle.close();
    for (const entry of entries) {
      const entryRel = rel === '.' ? entry.name : join(rel, entry.name);
      if (!match || match.test(entry.name)) found.push(entryRel);
      if (found.length >= args.maxResults) break;
      if (entry.isDirectory() && depth < 32) {
        queue.push({ dir: join(dir, entry.name), rel: entryRel, depth: depth + 1 });
      }
    }
  }
  return { path: shown, results: found, truncated: found.length >= args.maxResults };
}

/** Runs a system tool with a minimal environment, a deadline, an output cap and optional stdin. */
function runTool(
  command: string,
  argv: string[],
  signal: AbortSignal,
  stdin?: Buffer,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(command, argv, {
      env: { PATH: '/usr/bin:/bin' },
      stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      timeout: PROCESS_TIMEOUT_MS,
      signal,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    let failed = false;
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (stdout.length > PROCESS_OUTPUT) {
        failed = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-2000);
    });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(stdin);
    child.on('error', (error) => {
      failed = true;
      stderr ||= error.message;
    });
    child.on('close', (code) => done({ code: failed ? -1 : (code ?? -1), stdout, stderr }));
  });
}

async function grep(ctx: BuiltinContext, args: z.infer<typeof schemas.grep>) {
  const { shown, realRoot } = await confine(ctx.root, args.path);
  // grep walks the tree itself: it runs in a jail that holds only the workspace (read-only),
  // so no symlink the script plants, even mid-walk, leads anywhere else.
  const argv = [
    ...systemJailArgs(),
    '--ro-bind',
    realRoot,
    JAIL_PATHS.workspace,
    '--chdir',
    JAIL_PATHS.workspace,
    '--',
    'grep',
    // POSIX extended regular expressions (no backtracking blow-up); -r never follows symlinks.
    '-rnIE',
    '--no-messages',
    '-m',
    String(args.maxMatches),
  ];
  if (args.ignoreCase) argv.push('-i');
  argv.push('-e', args.pattern, '--', shown);
  const result = await runTool(ctx.bwrapPath, argv, ctx.signal);
  if (result.code < 0 || result.code > 1) {
    throw new BuiltinRefusal(`grep failed: ${result.stderr.slice(0, 200) || 'timeout or output cap'}`);
  }
  const matches: Array<{ path: string; line: number; text: string }> = [];
  for (const row of result.stdout.split('\n')) {
    const found = /^(.*?):(\d+):(.*)$/.exec(row);
    if (!found) continue;
    matches.push({
      path: (found[1] as string).replace(/^\.\//, ''),
      line: Number(found[2]),
      text: (found[3] as string).slice(0, 1000),
    });
    if (matches.length >= args.maxMatches) break;
  }
  return { matches, truncated: matches.length >= args.maxMatches };
}

async function jq(ctx: BuiltinContext, args: z.infer<typeof schemas.jq>) {
  // Modules would read files by their own paths, outside the confined one.
  if (/\b(import|include|modulemeta|get_search_list)\b/.test(args.filter)) {
    throw new BuiltinRefusal('jq modules (import, include) are not available');
  }
  const { handle, shown } = await openConfined(ctx.root, args.path, 'file');
  let input: Buffer;
  try {
    const info = await handle.stat();
    if (info.size > MAX_READ) throw new BuiltinRefusal(`${shown} is larger than ${MAX_READ} bytes`);
    input = await handle.readFile();
  } finally {
    await handle.close();
  }
  // jq reads the file from stdin (opened here, checked on the handle); jq 1.6 has no `--`, so a
  // leading space keeps a filter like `-1` from reading as an option.
  const filter = args.filter.startsWith('-') ? ` ${args.filter}` : args.filter;
  const result = await runTool('jq', ['-c', filter], ctx.signal, input);
  if (result.code !== 0) throw new BuiltinRefusal(`jq failed: ${result.stderr.trim().slice(0, 300)}`);
  return {
    results: result.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as unknown),
  };
}
