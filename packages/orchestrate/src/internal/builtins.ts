import { execFile } from 'node:child_process';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import { JAIL_PATHS } from './jail.js';

/** A builtin's answer, or why it refused (a plain message for the script). */
export class BuiltinRefusal extends Error {}

/** What a builtin needs from the call: the workspace root, a signal, the web fetcher. */
export interface BuiltinContext {
  root: string;
  signal: AbortSignal;
  webFetch: ((url: string, signal: AbortSignal) => Promise<unknown>) | undefined;
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
export async function confine(root: string, input: string): Promise<{ host: string; shown: string }> {
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
  const inside = relative(realRoot, target);
  if (inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
    throw new BuiltinRefusal('path resolves outside the workspace');
  }
  return { host: target, shown: inside === '' ? '.' : inside };
}

/** Runs builtin `name` with `params`; a refusal or bad params throws {@link BuiltinRefusal}. */
export async function runBuiltin(
  name: keyof typeof schemas,
  params: unknown,
  ctx: BuiltinContext,
): Promise<unknown> {
  const checked = schemas[name].safeParse(params ?? {});
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new BuiltinRefusal(`args.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
  }
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
  }
}

async function read(ctx: BuiltinContext, args: z.infer<typeof schemas.read>) {
  const { host, shown } = await confine(ctx.root, args.path);
  const info = await stat(host);
  if (!info.isFile()) throw new BuiltinRefusal(`not a file: ${shown}`);
  const handle = await open(host, 'r');
  try {
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
  const { host, shown } = await confine(ctx.root, args.path);
  const entries = await readdir(host, { withFileTypes: true }).catch(() => {
    throw new BuiltinRefusal(`not a directory: ${shown}`);
  });
  return {
    path: shown,
    entries: entries.slice(0, 5000).map((entry) => ({
      name: entry.name,
      type: entry.isDirectory() ? 'dir' : entry.isSymbolicLink() ? 'link' : entry.isFile() ? 'file' : 'other',
    })),
  };
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
  const { host, shown } = await confine(ctx.root, args.path);
  const match = args.name ? globRegex(args.name) : undefined;
  const found: string[] = [];
  // Breadth first, never following symlinks, so the walk stays inside the workspace.
  const queue: Array<{ dir: string; rel: string; depth: number }> = [{ dir: host, rel: shown, depth: 0 }];
  while (queue.length > 0 && found.length < args.maxResults) {
    if (ctx.signal.aborted) break;
    const { dir, rel, depth } = queue.shift() as { dir: string; rel: string; depth: number };
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const entryRel = rel === '.' ? entry.name : join(rel, entry.name);
      if (!match || match.test(entry.name)) found.push(entryRel);
      if (found.length >= args.maxResults) break;
      if (entry.isDirectory() && depth < 32)
        queue.push({ dir: join(dir, entry.name), rel: entryRel, depth: depth + 1 });
    }
  }
  return { path: shown, results: found, truncated: found.length >= args.maxResults };
}

/** Runs a system tool with no environment, a deadline and an output cap. */
function runTool(
  command: string,
  argv: string[],
  cwd: string,
  signal: AbortSignal,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      command,
      argv,
      { cwd, env: {}, timeout: PROCESS_TIMEOUT_MS, maxBuffer: PROCESS_OUTPUT, signal, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

async function grep(ctx: BuiltinContext, args: z.infer<typeof schemas.grep>) {
  const { shown } = await confine(ctx.root, args.path);
  const root = await realpath(ctx.root);
  // POSIX extended regular expressions (no backtracking blow-up); -r never follows symlinks.
  const argv = ['-rnIE', '--no-messages', '-m', String(args.maxMatches)];
  if (args.ignoreCase) argv.push('-i');
  argv.push('-e', args.pattern, '--', shown);
  const result = await runTool('grep', argv, root, ctx.signal);
  if (result.code > 1)
    throw new BuiltinRefusal(`grep failed: ${result.stderr.slice(0, 200) || 'timeout or output cap'}`);
  const matches: Array<{ path: string; line: number; text: string }> = [];
  for (const row of result.stdout.split('\n')) {
    const found = /^(.*?):(\d+):(.*)$/.exec(row);
    if (!found) continue;
    matches.push({
      path: found[1] as string,
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
  const { host, shown } = await confine(ctx.root, args.path);
  if (!(await stat(host)).isFile()) throw new BuiltinRefusal(`not a file: ${shown}`);
  const root = await realpath(ctx.root);
  // jq 1.6 has no `--`: a leading space keeps a filter like `-1` from reading as an option, and
  // `./` does the same for a file name.
  const filter = args.filter.startsWith('-') ? ` ${args.filter}` : args.filter;
  const result = await runTool('jq', ['-c', filter, `./${shown}`], root, ctx.signal);
  if (result.code !== 0) throw new BuiltinRefusal(`jq failed: ${result.stderr.trim().slice(0, 300)}`);
  return {
    results: result.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as unknown),
  };
}
