import { TOOL_PATTERN, TOOL_PATTERN_RULE } from '@agentd/input-guards';
import { z } from 'zod';

/**
 * Tools a script never reaches through the capability socket, whatever its lease holds:
 * management and login tools, and the tools that would let a script start more scripts or
 * runs (a jailed script must not widen itself).
 */
export const DEFAULT_TOOL_DENYLIST: readonly string[] = [
  'orchestrate',
  'subagent_spawn',
  'subagent_steer',
  'subagent_kill',
  'admin*',
  'config*',
  'secret*',
  'lease*',
  'auth*',
  '*login*',
  'approval*',
  'browser_*',
];

/**
 * `orchestrate.webSearch`: the SearXNG instance behind the `web_search` builtin. Unset (the
 * default), `web_search` answers that web search is not configured.
 */
export const webSearchSchema = z.strictObject({
  /** Base URL of a SearXNG instance with its JSON format enabled (`<url>/search?format=json`). */
  url: z
    .string()
    .max(2048)
    .refine((value) => {
      try {
        const url = new URL(value);
        return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password;
      } catch {
        return false;
      }
    }, 'must be an http(s) URL without credentials'),
  /** Most hits answered per query (a call may ask for fewer). */
  maxResults: z.number().int().min(1).max(50).default(10),
  /** Deadline of one search request. */
  timeoutMs: z.number().int().min(100).max(60_000).default(10_000),
});

/** The parsed `orchestrate.webSearch` settings. */
export type WebSearchSettings = z.infer<typeof webSearchSchema>;

/** The `orchestrate` config section. */
export const orchestrateSectionSchema = z.strictObject({
  /** Register the `orchestrate` tool at all. */
  enabled: z.boolean().default(true),
  /** Wall-clock limit of one script run; the jail is killed past it (failureClass `timeout`). */
  timeoutMs: z.number().int().min(100).max(3_600_000).default(60_000),
  /**
   * Time to live of a run's child lease. A run that lasts longer has it renewed for as long
   * again every half of it while the script runs; a revoked lease is never renewed.
   */
  leaseTtlMs: z.number().int().min(1000).max(3_600_000).default(300_000),
  /** Bytes of stdout kept; past it the jail is killed (failureClass `stdout_cap`). */
  stdoutCapBytes: z
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(4 * 1024 * 1024),
  /**
   * Tasks (processes and threads) one run may hold at once: a pids cgroup per run when the
   * daemon is root and one is writable, else RLIMIT_NPROC inside the jail. The jailed Node
   * alone uses about a dozen.
   */
  maxProcesses: z.number().int().min(16).max(4096).default(64),
  /** Memory of one run in MiB: the run's memory cgroup when there is one, and each process's RLIMIT_DATA. */
  maxMemoryMb: z.number().int().min(64).max(65_536).default(1024),
  /** The bubblewrap binary. */
  bwrapPath: z.string().min(1).max(4096).default('bwrap'),
  /** The Node binary run inside the jail. @default the daemon's own (`process.execPath`) */
  nodePath: z.string().min(1).max(4096).optional(),
  /** Tool names or globs (`*` any run, `?` one character: `admin*`, `*login*`) the socket never routes to. */
  toolDenylist: z
    .array(z.string().regex(TOOL_PATTERN, TOOL_PATTERN_RULE))
    .max(200)
    .default([...DEFAULT_TOOL_DENYLIST]),
  /** Largest script accepted, in characters. */
  maxScriptChars: z.number().int().min(1).max(1_048_576).default(200_000),
  /** The `web_search` builtin's SearXNG endpoint. @default unset: web search is not configured */
  webSearch: webSearchSchema.optional(),
});

/** The parsed `orchestrate` section. */
export type OrchestrateSection = z.infer<typeof orchestrateSectionSchema>;
