import { createHash } from 'node:crypto';
import { z } from 'zod';

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
  /**
   * How the turn's new text was counted: the model family's tokenizer (`o200k_base`,
   * `cl100k_base`) or the CJK-aware characters/4 `estimate` for models whose tokenizer is unknown.
   */
  tokenCounting: z.enum(['o200k_base', 'cl100k_base', 'estimate']).optional(),
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
