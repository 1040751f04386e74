import type { Logger } from '@agentd/contracts';
import { z } from 'zod';

const KiB = 1024;
const MiB = 1024 * KiB;

/** A size limit in bytes: at least 1 KiB, at most `max`, `fallback` when unset. */
const byteLimit = (max: number, fallback: number) => z.number().int().min(KiB).max(max).default(fallback);

/**
 * The `workspace` section of the agentd config file. Every key applies to the next call
 * (`WorkspaceService.applyConfig`); nothing needs a restart.
 */
export const workspaceSectionSchema = z
  .object({
    /**
     * Create an agent's workspace (repository and template files) the first time it is used
     * by an agent tool or a writing method. Off, such a call fails until `workspace.init`.
     * @default true
     */
    autoInit: z.boolean().default(true),
    /** Bytes of a file a read returns; the rest is cut and `truncated` is set. @default 262144 */
    maxReadBytes: byteLimit(64 * MiB, 256 * KiB),
    /** Largest content a write accepts, in bytes. @default 5242880 */
    maxWriteBytes: byteLimit(256 * MiB, 5 * MiB),
    /** Bytes of a diff returned; the rest is cut and `truncated` is set. @default 262144 */
    maxDiffBytes: byteLimit(64 * MiB, 256 * KiB),
    /** Characters kept of a commit message after sanitising. @default 2000 */
    maxCommitMessageChars: z.number().int().min(50).max(100_000).default(2000),
    /** Entries a directory listing, a glob or a log returns at most. @default 1000 */
    maxListEntries: z.number().int().min(10).max(100_000).default(1000),
    /** Matching lines a grep returns at most. @default 200 */
    maxGrepMatches: z.number().int().min(1).max(10_000).default(200),
    /**
     * Age after which a leftover `.git/index.lock` is taken as stale (a git that crashed) and
     * removed; a younger lock may belong to a git still running and makes the call fail.
     * @default 60000
     */
    staleLockMs: z.number().int().min(1000).max(3_600_000).default(60_000),
    /** Upper bound on one git process, in ms. @default 30000 */
    gitTimeoutMs: z.number().int().min(1000).max(600_000).default(30_000),
    /** Author and committer of workspace commits. @default { name: 'agentd', email: 'agentd@localhost' } */
    author: z
      .object({
        name: z.string().min(1).max(200).default('agentd'),
        email: z.string().min(3).max(200).default('agentd@localhost'),
      })
      .strict()
      .default({ name: 'agentd', email: 'agentd@localhost' }),
  })
  .strict();

/** The parsed `workspace` config section. */
export type WorkspaceSection = z.output<typeof workspaceSectionSchema>;

/** Options of {@link createWorkspaceService}: the config section plus what the embedder injects. */
export type WorkspaceServiceOptions = z.input<typeof workspaceSectionSchema> & {
  /** The data directory; workspaces live in `<dataDir>/workspaces/<agentId>/`. */
  dataDir: string;
  /** Logger. @default a no-op logger */
  logger?: Logger;
  /** Clock in ms, for commit dates. @default Date.now */
  now?: () => number;
};
