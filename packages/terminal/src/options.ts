import type { EventSink, Logger } from '@agentd/contracts';
import { z } from 'zod';

/**
 * The `terminal` section of the agentd config file: the limits of agents' terminal drives.
 * `TerminalService.applyConfig` applies a new section to open drives at the next check and
 * to drives opened from then on.
 */
export const terminalSectionSchema = z
  .object({
    /** Terminal drives at all; off, opening one fails. @default true */
    enabled: z.boolean().default(true),
    /** Open drives per agent; opening one more evicts the least recently used (`max_sessions`). @default 4 */
    maxSessionsPerAgent: z.number().int().min(1).max(100).default(4),
    /** A drive the agent has not touched (send, read, wait) for this long is evicted (`idle`), in ms. @default 300000 */
    idleTimeoutMs: z.number().int().min(100).max(86_400_000).default(300_000),
    /** A drive open this long is evicted whatever it does (`wall_clock`), in ms. @default 1800000 */
    wallClockMs: z.number().int().min(100).max(604_800_000).default(1_800_000),
    /** Sends, reads and waits one drive allows; the next one evicts it (`max_interactions`). @default 500 */
    maxInteractions: z.number().int().min(1).max(1_000_000).default(500),
    /** Terminal width in columns. @default 120 */
    cols: z.number().int().min(20).max(500).default(120),
    /** Terminal height in rows. @default 40 */
    rows: z.number().int().min(5).max(300).default(40),
    /** Lines kept above the screen, readable with `scrollback`. @default 1000 */
    scrollback: z.number().int().min(0).max(100_000).default(1000),
    /** Silence that makes output "quiet" for a wait, in ms. @default 500 */
    quietMs: z.number().int().min(10).max(60_000).default(500),
    /** Longest a wait may last, in ms. @default 30000 */
    maxWaitMs: z.number().int().min(100).max(600_000).default(30_000),
    /** Between SIGTERM and SIGKILL to a drive's process group, in ms. @default 2000 */
    killGraceMs: z.number().int().min(0).max(60_000).default(2000),
    /**
     * Extra environment of every drive. The daemon's own environment is not passed on (it holds
     * tokens and keys): a drive gets PATH, HOME, USER, LANG, LC_ALL, TZ, TERM and these.
     * @default {}
     */
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().max(32_768)).default({}),
  })
  .strict();

/** The parsed `terminal` config section. */
export type TerminalSection = z.output<typeof terminalSectionSchema>;

/** Options of {@link createTerminalService}: the config section plus what the embedder injects. */
export type TerminalServiceOptions = z.input<typeof terminalSectionSchema> & {
  /** The directory a drive of `agentId` runs in (the agent's workspace, created when needed). */
  cwd: (agentId: string) => Promise<string>;
  /** Environment of the agent's drives on top of the inherited few (e.g. its git repository). @default none */
  agentEnv?: (agentId: string) => Record<string, string>;
  /** Receives `terminal.drive_promoted` and `terminal.session_evicted`. @default none */
  events?: EventSink;
  /** Logger. @default a no-op logger */
  logger?: Logger;
  /** Clock in ms. @default Date.now */
  now?: () => number;
  /** Where PATH, HOME and the like are taken from. @default process.env */
  baseEnv?: NodeJS.ProcessEnv;
};
