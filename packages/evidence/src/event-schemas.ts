import { z } from 'zod';

/**
 * Typed schemas of the evidence rows the reports read: the session events, the fleet events
 * and the health-signal rows the contract names, plus channel activity and delivery traces.
 * Objects are loose (producers may add ids and counts; the reports ignore what they do not
 * know) but every field a report reads is typed here. The writer checks each payload of a
 * category listed in {@link EVIDENCE_SCHEMAS} before storing it.
 */

const count = z.number().int().nonnegative();
const id = z.string().min(1).max(600);
const nullableId = id.nullable();
const capabilityClass = z.enum(['frontier', 'mid', 'small', 'nano', 'unknown']);

/** `tool:breaker`: a tool circuit breaker changed state in a session. */
export const toolBreakerEventSchema = z.looseObject({
  sessionKey: id,
  toolName: id,
  event: z.enum(['opened', 'half_open', 'closed']),
  /** The call's per-turn seq; the report maps `traceId` + `toolCallId` to the session-wide seq. */
  seq: count.optional(),
  traceId: id.optional(),
  toolCallId: id.optional(),
  consecutiveFailures: count.optional(),
});

/** `offload:written`: a large tool result was stored on disk; a pointer went to the model. */
export const offloadWrittenEventSchema = z.looseObject({
  sessionKey: id,
  /** Relative to the data directory. */
  diskPathRel: id,
  bytes: count,
  /** False when the result was too large to store (the pointer resolves to nothing). */
  resolved: z.boolean().optional(),
});

/** `memory:recalled`: counts of one recall (never memory text). */
export const memoryRecalledEventSchema = z.looseObject({
  lanes: z.array(z.enum(['fts', 'vector'])),
  finalCount: count,
  /** 0 when the vector index was unavailable. */
  vectorCandidates: count,
  crossUserCount: count.optional(),
});

/** `memory:reranked`: whether the reranker answered or the fused ranking stood. */
export const memoryRerankedEventSchema = z.looseObject({
  fellBack: z.boolean(),
  timedOut: z.boolean(),
});

const voiceErrorKind = z.enum([
  'no_keyless_engine',
  'auth_required',
  'model_load_failed',
  'model_download_failed',
  'timeout',
  'network',
  'dependency',
]);

/** `voice:turn`: one transcription or synthesis (content-free). */
export const voiceTurnEventSchema = z.looseObject({
  provider: id,
  keyless: z.boolean(),
  outcome: z.enum(['ok', 'failed']),
  model: id.optional(),
  durationMs: z.number().nonnegative().optional(),
  source: z.enum(['keyless-local', 'follow-main-key', 'fallback', 'explicit']).optional(),
  errorKind: voiceErrorKind.optional(),
});

/** `learning:observed`: what the learning layer saw of a turn. */
export const learningObservedEventSchema = z.looseObject({
  outcomeResolved: z.boolean(),
  outcome: z.enum(['success', 'failure', 'corrected', 'unknown']).optional(),
  sources: z.array(z.enum(['tool', 'pipeline', 'correction', 'judge', 'reaction', 'explicit'])),
  skillsUsed: count,
  skillFailures: count,
  synthesisAbstained: z.boolean(),
  skillsPromoted: count.optional(),
  skillsDemoted: count.optional(),
  failuresAttributed: count.optional(),
});

/** `orchestrate:run_summary`: one orchestrate-script run. */
export const orchestrateRunSummaryEventSchema = z.looseObject({
  runId: id,
  leaseId: id.optional(),
  exitCode: z.number().int(),
  durationMs: z.number().nonnegative(),
  failureClass: z.enum(['timeout', 'stdout_cap', 'nonzero_exit', 'spawn_fail', 'lease_absent']).optional(),
  toolCalls: z.array(z.looseObject({ tool: id, capability: id, decision: id, count })),
  resultRefs: z.looseObject({ count, bytes: count }),
  savings: z.looseObject({ estSavedTokens: count, savedRatio: z.number() }).optional(),
});

/** `terminal.drive_promoted`: a terminal drive was created. */
export const terminalDrivePromotedEventSchema = z.looseObject({ taskSent: z.boolean() });

/** `terminal.session_evicted`: a terminal drive was evicted (rule 12's signal). */
export const terminalSessionEvictedEventSchema = z.looseObject({
  reason: z.enum(['idle', 'wall_clock', 'max_sessions', 'max_interactions']),
  idleMs: count,
  wasProducing: z.boolean(),
});

/** `pipeline:authored`: one pipeline `define` or `execute` authoring. */
export const pipelineAuthoredEventSchema = z.looseObject({
  action: z.enum(['define', 'execute']),
  agentId: nullableId,
  capabilityClass,
  valid: z.boolean(),
  nodeCount: count,
  invalidReason: z.enum(['parse', 'validation', 'not_found']).optional(),
  excluded: z.enum(['empty_define', 'policy_rejected']).optional(),
});

/** `cron:fired`: one cron or heartbeat fire, gated or not. */
export const cronFiredEventSchema = z.looseObject({
  jobId: id,
  agentId: nullableId,
  status: id,
  gateOutcome: z.enum(['wake', 'skip', 'failed-open']).optional(),
  gateDurationMs: z.number().nonnegative().nullable().optional(),
  gateFailure: id.optional(),
});

/** `learning:lifecycle_swept`: one memory lifecycle sweep. */
export const learningLifecycleSweptEventSchema = z.looseObject({
  agentId: id,
  scanned: count,
  promoted: count,
  demoted: count,
  evicted: count,
});

/** `config_posture` health row: the standing configuration (rule 7 reads the latest only). */
export const configPostureRowSchema = z.looseObject({
  servedBelowConfigured: count.optional(),
  importedSkillsOutsideAllowlist: count.optional(),
});

/** `voice_degraded` health row: a degraded speech turn. */
export const voiceDegradedRowSchema = z.looseObject({ errorKind: voiceErrorKind.optional() });

/** `pipeline_authoring` health row: a small or nano tier authoring that failed validation. */
export const pipelineAuthoringRowSchema = z.looseObject({
  capabilityClass: z.enum(['small', 'nano']),
  invalidReason: z.enum(['parse', 'validation', 'not_found']).optional(),
});

/** `cron_wake_gate` health row: a gate failed open and the model was woken defensively. */
export const cronWakeGateRowSchema = z.looseObject({
  jobId: id,
  gateOutcome: z.literal('failed-open'),
  gateFailure: id.optional(),
});

/** `orchestrate_efficiency` health row. */
export const orchestrateEfficiencyRowSchema = z.looseObject({ runs: count, estSavedTokens: count });

/** `autonomy_denial_breaker` health row: the capability-denial breaker tripped. */
export const autonomyDenialBreakerRowSchema = z.looseObject({ rootRunId: id.optional() });

/** The schema of every category the writer checks before storing. */
export const EVIDENCE_SCHEMAS: Readonly<Record<string, z.ZodType<Record<string, unknown>>>> = {
  'tool:breaker': toolBreakerEventSchema,
  'offload:written': offloadWrittenEventSchema,
  'memory:recalled': memoryRecalledEventSchema,
  'memory:reranked': memoryRerankedEventSchema,
  'voice:turn': voiceTurnEventSchema,
  'learning:observed': learningObservedEventSchema,
  'orchestrate:run_summary': orchestrateRunSummaryEventSchema,
  'terminal.drive_promoted': terminalDrivePromotedEventSchema,
  'terminal.session_evicted': terminalSessionEvictedEventSchema,
  'pipeline:authored': pipelineAuthoredEventSchema,
  'cron:fired': cronFiredEventSchema,
  'learning:lifecycle_swept': learningLifecycleSweptEventSchema,
  config_posture: configPostureRowSchema,
  voice_degraded: voiceDegradedRowSchema,
  pipeline_authoring: pipelineAuthoringRowSchema,
  cron_wake_gate: cronWakeGateRowSchema,
  orchestrate_efficiency: orchestrateEfficiencyRowSchema,
  autonomy_denial_breaker: autonomyDenialBreakerRowSchema,
};

/** The category a payload that failed its schema is stored under (with the category and the field path only). */
export const INVALID_EVIDENCE_CATEGORY = 'evidence:invalid';

/**
 * The health-signal rows the writer derives from events, so the signals the contract names
 * have a row each time they happen: a small or nano tier pipeline authoring that failed
 * validation (`pipeline_authoring`), a wake-gate that failed open (`cron_wake_gate`).
 * Answers the row's category and payload, or undefined when the event is no signal.
 */
export function deriveHealthSignal(
  event: string,
  payload: Record<string, unknown>,
): { category: string; payload: Record<string, unknown> } | undefined {
  if (event === 'pipeline:authored') {
    const tier = payload.capabilityClass;
    if (payload.valid !== false || payload.excluded !== undefined || (tier !== 'small' && tier !== 'nano'))
      return undefined;
    return {
      category: 'pipeline_authoring',
      payload: {
        agentId: payload.agentId,
        capabilityClass: tier,
        ...(payload.invalidReason === undefined ? {} : { invalidReason: payload.invalidReason }),
        timestamp: payload.timestamp,
      },
    };
  }
  if (event === 'cron:fired' && payload.gateOutcome === 'failed-open') {
    return {
      category: 'cron_wake_gate',
      payload: {
        jobId: payload.jobId,
        agentId: payload.agentId,
        gateOutcome: 'failed-open',
        ...(payload.gateFailure === undefined ? {} : { gateFailure: payload.gateFailure }),
        timestamp: payload.timestamp,
      },
    };
  }
  return undefined;
}

/**
 * The channel activity one event stands for: an `agent:turn_completed` naming its
 * `channelType` is one message received on that channel and, unless the turn failed or was
 * cancelled before answering, one sent. The channel id is the turn's chat id (the channel
 * segment of its session key) or else its channel type.
 */
export function deriveChannelActivity(
  event: string,
  payload: Record<string, unknown>,
  now: number,
): z.infer<typeof channelActivitySchema> | undefined {
  if (event !== 'agent:turn_completed' || typeof payload.channelType !== 'string') return undefined;
  const channelId = typeof payload.chatId === 'string' ? payload.chatId : payload.channelType;
  const answered = payload.endReason !== 'error' && payload.endReason !== 'cancelled';
  const timestamp = typeof payload.timestamp === 'number' ? payload.timestamp : now;
  return {
    channelId,
    channelType: payload.channelType,
    lastActiveAt: Math.round(timestamp),
    messagesSent: answered ? 1 : 0,
    messagesReceived: 1,
  };
}

/** Channel activity (`obs.channels.*`). */
export const channelActivitySchema = z.object({
  channelId: id,
  channelType: id,
  lastActiveAt: z.number().int().nonnegative(),
  messagesSent: count,
  messagesReceived: count,
});

/** One delivery trace (`obs.delivery.recent`). */
export const deliveryTraceSchema = z.object({
  ts: z.number().int().nonnegative(),
  channelId: id,
  outcome: z.enum(['delivered', 'failed']),
  latencyMs: z.number().nonnegative(),
  errorKind: id.optional(),
});
