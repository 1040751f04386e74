import { createHash } from 'node:crypto';
import { access, appendFile, mkdir, open, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { type AgentRuntimeLogger, noopLogger } from './logger.js';

/** Version of the evidence records written by this package. */
export const EVIDENCE_SCHEMA_VERSION = 1;

/** Directory of the session-index day files, relative to the data dir. */
export const SESSION_INDEX_DIR = 'obs/session-index';
/** Suffix of the marker file that exists while an evidence file rolls (readers retry meanwhile). */
export const ROLL_MARKER_SUFFIX = '.rolling';
/** Directory of the per-session trajectory files, relative to the data dir. */
export const TRAJECTORY_DIR = 'obs/trajectories';
/**
 * A session's trajectory stops growing at this many bytes, live file and rolled parts together
 * (the contract's in-session hard cap).
 */
export const TRAJECTORY_HARD_CAP_BYTES = 50 * 1024 * 1024;
/** A session's live trajectory file rolls at this size (the contract's soft cap). */
export const TRAJECTORY_SOFT_CAP_BYTES = 10 * 1024 * 1024;
/** `observability.logRotation.maxSizeBytes` default: a session-index day file rolls at this size. */
export const EVIDENCE_ROLL_BYTES = 52_428_800;
/** `observability.logRotation.maxFiles` default: rolled parts kept per day file and per session. */
export const EVIDENCE_MAX_PARTS = 5;

const endReasonSchema = z.enum([
  'completed',
  'completed_with_tool_errors',
  'context_exhausted',
  'output_starved',
  'timeout',
  'max_steps',
  'cancelled',
  'error',
]);

const finishReasonSchema = z.enum([
  'stop',
  'length',
  'tool_calls',
  'content_filter',
  'timeout',
  'cancelled',
  'error',
]);

const tokensSchema = z.object({
  input: z.number().int().nonnegative(),
  output: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  cacheRead: z.number().int().nonnegative(),
  cacheWrite: z.number().int().nonnegative(),
});

const baseRecord = {
  v: z.literal(EVIDENCE_SCHEMA_VERSION),
  ts: z.number().int(),
  sessionKey: z.string(),
  traceId: z.string(),
  agentId: z.string(),
};

/** The `contextBudget` figures of the IncidentReport, one record per model call. */
export const contextBudgetRecordSchema = z.object({
  windowTokens: z.number().int(),
  rawContextWindowTokens: z.number().int(),
  windowCapSource: z.enum([
    'effectiveContextCapSmall',
    'effectiveContextCapNano',
    'served',
    'capabilityClass',
    'none',
  ]),
  systemTokens: z.number().int(),
  freshTailTokens: z.number().int(),
  budgetedHistoryTokens: z.number().int(),
  keptCount: z.number().int(),
  assembledInputTokens: z.number().int(),
  outputHeadroom: z.number().int(),
  verdict: z.enum(['fits', 'downshifted', 'exhausted']),
  /** Tokens of the recalled-memories block, part of `systemTokens` (only when the turn recalled). */
  recallTokens: z.number().int().optional(),
});

/** A context budget record. */
export type ContextBudget = z.infer<typeof contextBudgetRecordSchema>;

/**
 * One line of a trajectory file (`obs/trajectories/<file>.jsonl`): tool-call provenance
 * (name, success, duration, error kind, a digest of the result; never the result itself),
 * the context budget of each model call, and the start and end of each turn.
 */
export const trajectoryRecordSchema = z.discriminatedUnion('type', [
  z.object({
    ...baseRecord,
    type: z.literal('turn_start'),
    origin: z.string(),
    provider: z.string(),
    model: z.string(),
  }),
  z.object({
    ...baseRecord,
    type: z.literal('context_budget'),
    step: z.number().int(),
    budget: contextBudgetRecordSchema,
  }),
  z.object({
    ...baseRecord,
    type: z.literal('tool_call'),
    /** Order of the call within the session's trajectory file (1-based per turn). */
    seq: z.number().int(),
    step: z.number().int(),
    toolName: z.string(),
    toolCallId: z.string(),
    ok: z.boolean(),
    durationMs: z.number().nonnegative(),
    /** `unknown_tool`, `denied`, `invalid_input`, `timeout`, `cancelled`, `tool_error`. */
    errorKind: z.string().optional(),
    /** First 200 characters of the error message (tool errors only). */
    errorPreview: z.string().optional(),
    resultBytes: z.number().int().nonnegative(),
    /** `sha256:` and 16 hex digits of the serialised result. */
    resultDigest: z.string(),
  }),
  z.object({
    ...baseRecord,
    type: z.literal('turn_end'),
    endReason: endReasonSchema,
    finishReason: finishReasonSchema,
    steps: z.number().int(),
    durationMs: z.number().nonnegative(),
    tokens: tokensSchema,
    costUsd: z.number().nonnegative(),
    toolCalls: z.object({ ok: z.number().int(), failed: z.number().int() }),
  }),
]);

/** One trajectory line. */
export type TrajectoryRecord = z.infer<typeof trajectoryRecordSchema>;

/**
 * What the automatic recall before a turn did: counts and booleans only, never memory text.
 * The IncidentReport's `recall` block sums these over a session's turns (`recalls`, `zeroHits`
 * from `finalCount: 0`, `lastLanes`, `lastFinalCount`, `rerankerAvailable`).
 */
export const turnRecallRecordSchema = z.object({
  /** `false` when recall failed or timed out; the turn then ran without memories. */
  ok: z.boolean(),
  /** Lanes that produced candidates (`fts`, `vector`). */
  lanes: z.array(z.enum(['fts', 'vector'])),
  /** Memories recalled (after the score floor). */
  finalCount: z.number().int().nonnegative(),
  ftsCandidates: z.number().int().nonnegative(),
  /** 0 when the vector lane was unavailable. */
  vectorCandidates: z.number().int().nonnegative(),
  reranked: z.boolean(),
  rerankFellBack: z.boolean(),
  /** Full-text only because the vector lane failed. */
  degraded: z.boolean(),
  /** Tokens of the memories put into the context; less than the recall's block when the budget was short. */
  injectedTokens: z.number().int().nonnegative(),
  durationMs: z.number().nonnegative(),
  /** Why recall failed (`timeout`, `dependency`, or `cancelled` with the turn); only when `ok` is false. */
  errorKind: z.string().optional(),
});

/** One turn's recall evidence. */
export type TurnRecallRecord = z.infer<typeof turnRecallRecordSchema>;

/** One line of a session-index day file (`obs/session-index/YYYY-MM-DD.jsonl`, UTC days): one per turn. */
export const sessionIndexRecordSchema = z.object({
  v: z.literal(EVIDENCE_SCHEMA_VERSION),
  ts: z.number().int(),
  traceId: z.string(),
  /** Id of the user message (`<sessionKey>#<seq>`), resolvable to `traceId`. */
  messageId: z.string().optional(),
  sessionKey: z.string(),
  agentId: z.string(),
  channelType: z.string(),
  /** The channel's chat id (the channel segment of the session key, when it has one). */
  chatId: z.string().optional(),
  origin: z.string(),
  kind: z.string(),
  provider: z.string(),
  model: z.string(),
  outcome: z.object({
    endReason: endReasonSchema,
    degraded: z.boolean(),
    severity: z.enum(['info', 'warning', 'error']),
  }),
  finishReason: finishReasonSchema,
  costUsd: z.number().nonnegative(),
  tokens: tokensSchema,
  durationMs: z.number().nonnegative(),
  steps: z.number().int(),
  toolCalls: z.object({ ok: z.number().int(), failed: z.number().int() }),
  /** Test-harness traffic; excluded by readers unless asked for. */
  synthetic: z.boolean(),
  /** Trajectory file of the session, relative to the data dir. */
  trajectoryFile: z.string(),
  /** Provider error code when `endReason` is `error`. */
  errorCode: z.string().optional(),
  /** The automatic recall before the turn, when the agent has `memory.autoRecall` on. */
  recall: turnRecallRecordSchema.optional(),
});

/** One session-index line. */
export type SessionIndexRecord = z.infer<typeof sessionIndexRecordSchema>;

/**
 * File name of a session's trajectory: a readable prefix of the key plus a hash, so any
 * key (up to 512 characters, any punctuation) maps to one safe, short file name.
 */
export function trajectoryFileName(sessionKey: string): string {
  const readable = sessionKey.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 64);
  const hash = createHash('sha256').update(sessionKey).digest('hex').slice(0, 16);
  return `${readable}-${hash}.jsonl`;
}

/** Session-index day file name for a time (UTC day). */
export function sessionIndexFileName(ts: number): string {
  return `${new Date(ts).toISOString().slice(0, 10)}.jsonl`;
}

/** Whether an end reason counts as degraded. */
export function isDegraded(endReason: z.infer<typeof endReasonSchema>): boolean {
  return endReason !== 'completed' && endReason !== 'cancelled';
}

/** `sha256:` + 16 hex digits of a text. */
export function digest(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
}

/** Options of {@link EvidenceWriter}: the roll sizes and part counts of `observability.logRotation`. */
export const evidenceWriterOptionsSchema = z.object({
  /** Rotation policy (`observability.logRotation`); keys other than these two are ignored. */
  rotation: z
    .object({
      /** A session-index day file rolls at this size. @default 52428800 */
      maxSizeBytes: z.number().int().positive().default(EVIDENCE_ROLL_BYTES),
      /** Rolled parts kept per day file and per session; 0 keeps none. @default 5 */
      maxFiles: z.number().int().min(0).default(EVIDENCE_MAX_PARTS),
    })
    .default({ maxSizeBytes: EVIDENCE_ROLL_BYTES, maxFiles: EVIDENCE_MAX_PARTS }),
  /** A live trajectory file rolls at this size. @default 10485760 */
  trajectorySoftCapBytes: z.number().int().positive().default(TRAJECTORY_SOFT_CAP_BYTES),
  /** A session's trajectory (live file plus rolled parts, uncompressed) stops growing here. @default 52428800 */
  trajectoryHardCapBytes: z.number().int().positive().default(TRAJECTORY_HARD_CAP_BYTES),
});

/** Options of {@link EvidenceWriter} as accepted (every key optional). */
export type EvidenceWriterOptions = z.input<typeof evidenceWriterOptionsSchema>;

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';

/** Size of a file's text: its size, or for a `.gz` file the length gzip records in its trailer. */
async function textBytes(path: string, gzipped: boolean): Promise<number | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (!gzipped) return size;
    if (size < 4) return 0;
    const trailer = Buffer.alloc(4);
    await handle.read(trailer, 0, 4, size - 4);
    // ISIZE is the length modulo 2^32; parts are far below 4 GiB.
    return trailer.readUInt32LE(0);
  } finally {
    await handle.close();
  }
}

/** Bytes of the rolled parts `<path>.1`, `<path>.2`, ... (plain or `.gz`), up to the first gap. */
async function partBytes(path: string): Promise<number> {
  let total = 0;
  for (let n = 1; ; n++) {
    const bytes = (await textBytes(`${path}.${n}`, false)) ?? (await textBytes(`${path}.${n}.gz`, true));
    if (bytes === undefined) return total;
    total += bytes;
  }
}

interface FileState {
  /** Bytes in the live file. */
  live: number;
  /** Bytes of the live file and its rolled parts (trajectories only). */
  total: number;
  /** The hard-cap warning was logged for this file. */
  warned: boolean;
}

interface StreamPolicy {
  rollBytes: number;
  hardCapBytes: number | undefined;
}

/**
 * Roll counts of evidence files, for in-process readers: `of(relative)` is even while the file
 * is settled and odd while it rolls, and changes with every roll. A reader that saw the same
 * even count before and after reading a stream read no roll (no part twice, none missed).
 */
export interface EvidenceRolls {
  /** The roll count of a file relative to the data dir (e.g. `obs/trajectories/<name>`). */
  of(relative: string): number;
}

/** Files whose sizes an {@link EvidenceWriter} keeps in memory (least recently written dropped first). */
export const FILE_STATES_KEPT = 4096;

/**
 * Appends evidence lines. Lines of one file are written in order; a write failure is
 * logged and never fails a turn.
 *
 * Rotation (`observability.logRotation`): a write that would take a live file past its roll
 * size (a session-index day file at `maxSizeBytes`, a trajectory at the 10 MB soft cap) first
 * rolls it: `<file>.<n>` becomes `<file>.<n+1>` (plain or `.gz`), the part at `maxFiles` is
 * deleted, and the live file becomes `<file>.1`. A write is never split, and a write into an
 * empty file never rolls. A session's trajectory, live file and parts together, stops at the
 * 50 MB hard cap: later lines are dropped, with one warning per file.
 */
export class EvidenceWriter {
  readonly #dataDir: string;
  readonly #logger: AgentRuntimeLogger;
  readonly #options: z.output<typeof evidenceWriterOptionsSchema>;
  // Only files that rolled (every 10-50 MB) get an entry.
  readonly #rollCounts = new Map<string, number>();
  /** Roll counts of this writer's files (see {@link EvidenceRolls}). */
  readonly rolls: EvidenceRolls = { of: (relative) => this.#rollCounts.get(relative) ?? 0 };
  readonly #queues = new Map<string, Promise<void>>();
  readonly #files = new Map<string, FileState>();
  #dirsReady: Promise<void> | undefined;

  /** @throws {z.ZodError} when `options` are invalid. */
  constructor(dataDir: string, logger: AgentRuntimeLogger = noopLogger, options: EvidenceWriterOptions = {}) {
    this.#dataDir = dataDir;
    this.#logger = logger;
    this.#options = evidenceWriterOptionsSchema.parse(options);
  }

  /** Appends trajectory records of one session. */
  trajectory(sessionKey: string, records: TrajectoryRecord[]): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    const relative = join(TRAJECTORY_DIR, trajectoryFileName(sessionKey));
    return this.#append(relative, records, {
      rollBytes: this.#options.trajectorySoftCapBytes,
      hardCapBytes: this.#options.trajectoryHardCapBytes,
    });
  }

  /** Appends one session-index record to its day file. */
  sessionIndex(record: SessionIndexRecord): Promise<void> {
    return this.#append(join(SESSION_INDEX_DIR, sessionIndexFileName(record.ts)), [record], {
      rollBytes: this.#options.rotation.maxSizeBytes,
      hardCapBytes: undefined,
    });
  }

  /** Waits for every queued write. */
  async flush(): Promise<void> {
    await Promise.all([...this.#queues.values()]);
  }

  #append(relative: string, records: unknown[], policy: StreamPolicy): Promise<void> {
    const text = `${records.map((record) => JSON.stringify(record)).join('\n')}\n`;
    const previous = this.#queues.get(relative) ?? Promise.resolve();
    const next = previous.then(() => this.#write(relative, text, policy));
    this.#queues.set(relative, next);
    void next.finally(() => {
      if (this.#queues.get(relative) === next) this.#queues.delete(relative);
    });
    return next;
  }

  /**
   * The sizes of a file, kept for the {@link FILE_STATES_KEPT} most recently written files
   * (every graph node and webhook turn is a session of its own, so a long-running daemon
   * touches unboundedly many); a file written again after eviction is measured on disk again.
   */
  async #state(path: string, relative: string, policy: StreamPolicy): Promise<FileState> {
    let state = this.#files.get(relative);
    if (state) {
      this.#files.delete(relative);
    } else {
      const live = (await textBytes(path, false)) ?? 0;
      const total = policy.hardCapBytes === undefined ? live : live + (await partBytes(path));
      state = { live, total, warned: false };
    }
    this.#files.set(relative, state);
    if (this.#files.size > FILE_STATES_KEPT) {
      const oldest = this.#files.keys().next().value;
      if (oldest !== undefined) this.#files.delete(oldest);
    }
    return state;
  }

  async #write(relative: string, text: string, policy: StreamPolicy): Promise<void> {
    const path = join(this.#dataDir, relative);
    try {
      this.#dirsReady ??= Promise.all([
        mkdir(join(this.#dataDir, SESSION_INDEX_DIR), { recursive: true }),
        mkdir(join(this.#dataDir, TRAJECTORY_DIR), { recursive: true }),
      ]).then(() => undefined);
      await this.#dirsReady;
      const state = await this.#state(path, relative, policy);
      const bytes = Buffer.byteLength(text);
      if (policy.hardCapBytes !== undefined && state.total + bytes > policy.hardCapBytes) {
        if (!state.warned) {
          state.warned = true;
          this.#logger.warn(
            {
              file: relative,
              capBytes: policy.hardCapBytes,
              hint: 'the trajectory is at its hard cap; older evidence stays, new lines are dropped',
              errorKind: 'resource',
            },
            'trajectory file at hard cap',
          );
        }
        return;
      }
      if (state.live > 0 && state.live + bytes > policy.rollBytes) {
        this.#rollCounts.set(relative, (this.#rollCounts.get(relative) ?? 0) + 1);
        try {
          await this.#roll(path);
        } finally {
          this.#rollCounts.set(relative, (this.#rollCounts.get(relative) ?? 0) + 1);
        }
        state.live = 0;
        // Rolling may have deleted the oldest part.
        if (policy.hardCapBytes !== undefined) state.total = await partBytes(path);
      }
      await appendFile(path, text);
      state.live += bytes;
      state.total += bytes;
    } catch (error) {
      this.#dirsReady = undefined;
      // Sizes are read from disk again on the next write.
      this.#files.delete(relative);
      this.#logger.warn(
        {
          err: error,
          file: relative,
          hint: 'check free space and permissions of the obs directory',
          errorKind: 'resource',
        },
        'evidence write failed',
      );
    }
  }

  /**
   * Shifts `<path>.<n>[.gz]` up by one (dropping the part at maxFiles) and moves the live file to
   * `.1`. The renames take several steps, so `<path>.rolling` exists while they run: a reader
   * that sees it (or sees `.1` change) reads again.
   */
  async #roll(path: string): Promise<void> {
    const marker = `${path}${ROLL_MARKER_SUFFIX}`;
    await writeFile(marker, '');
    try {
      await this.#shift(path);
    } finally {
      await unlink(marker).catch(() => undefined);
    }
  }

  async #shift(path: string): Promise<void> {
    const { maxFiles } = this.#options.rotation;
    // Only the parts that exist move (numbered 1..top without gaps; the start-up sweep closes
    // gaps a crash left), so a roll costs a few renames whatever maxFiles is.
    const present = (n: number) =>
      Promise.all(
        [access(`${path}.${n}`), access(`${path}.${n}.gz`)].map((check) =>
          check.then(
            () => true,
            () => false,
          ),
        ),
      ).then(([plain, packed]) => plain || packed);
    let top = 0;
    while (top < maxFiles && (await present(top + 1))) top++;
    for (let n = top; n >= 1; n--) {
      for (const suffix of ['', '.gz']) {
        const from = `${path}.${n}${suffix}`;
        try {
          if (n === maxFiles) await unlink(from);
          else await rename(from, `${path}.${n + 1}${suffix}`);
        } catch (error) {
          if (!isMissing(error)) throw error;
        }
      }
    }
    if (maxFiles === 0) await unlink(path);
    else await rename(path, `${path}.1`);
  }
}
