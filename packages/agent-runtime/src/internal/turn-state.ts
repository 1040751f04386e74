import type { CallerChannel } from '@agentd/contracts';
import type { AgentDefinition } from '../config.js';
import type { ContextWindow } from '../context.js';
import type { EVIDENCE_SCHEMA_VERSION, TrajectoryRecord, TurnRecallRecord } from '@agentd/evidence';
import type { TurnCapabilities } from '../model-capabilities.js';
import type { ResolvedModel } from '../model-resolver.js';
import type {
  ModelImage,
  ModelMessage,
  ModelProvider,
  ModelToolCall,
  ModelToolSpec,
  ModelUsage,
} from '../provider.js';
import type { NewMessage, SessionMessage, SessionRecord } from '../session-store.js';
import type { EndReason, FinishReason, TurnOrigin, TurnRequest } from '../types.js';
import type { TokenCounter } from '../token-counter.js';
import type { CachedSession } from './session-cache.js';

/** A turn request after validation. */
export interface TurnInput {
  agentId?: string | undefined;
  message: string;
  sessionKey?: string | undefined;
  model?: string | undefined;
  timeoutMs?: number | undefined;
  origin?: TurnOrigin | undefined;
  channelType?: string | undefined;
  traceId?: string | undefined;
  synthetic?: boolean | undefined;
  allowedTools?: string[] | undefined;
  turnKey?: string | undefined;
  memoryTenant?: string | undefined;
  callerChannel?: CallerChannel | undefined;
  images?: ModelImage[] | undefined;
  toolResults?: unknown[] | undefined;
}

/** Who and what a turn runs for, fixed before it starts. */
export interface TurnSetup {
  request: TurnRequest;
  input: TurnInput;
  sessionKey: string;
  session: SessionRecord | undefined;
  agentId: string;
  agent: AgentDefinition;
  resolved: ResolvedModel;
  provider: ModelProvider;
  traceId: string;
  origin: TurnOrigin;
  startedAt: number;
}

/** Everything one running turn accumulates; passed between the parts of the turn loop. */
export interface TurnState extends TurnSetup {
  /** The ids every evidence record of the turn carries. */
  base: { v: typeof EVIDENCE_SCHEMA_VERSION; sessionKey: string; traceId: string; agentId: string };
  trajectory: TrajectoryRecord[];
  window: ContextWindow;
  /** What the turn's model honours (images, JSON schema, forced tool choice). */
  capabilities: TurnCapabilities;
  /** Tools offered to the model. */
  offered: ModelToolSpec[];
  system: string;
  /**
   * Counts this turn's new text (system prompt, tool schemas, recalled memories, messages): the
   * model family's tokenizer when known, else the CJK-aware estimate. Stored history keeps the
   * count it was recorded with.
   */
  tokens: TokenCounter;
  /** System prompt, tool schemas and recalled memories. */
  systemTokens: number;
  maxOutputTokens: number;
  /** The messages this turn adds to the session, in order. */
  turnMessages: NewMessage[];
  /** The fresh tail sent on every step: the message and this turn's tool round trips. */
  tail: ModelMessage[];
  tailTokens: number;
  recallEvidence: TurnRecallRecord | undefined;
  /** The stored history sent before the tail, oldest first. */
  history: SessionMessage[];
  historyTokens: number;
  /** The session's cached context tail (extended when this turn commits). */
  cached: CachedSession | undefined;
  usage: ModelUsage;
  steps: number;
  response: string;
  finishReason: FinishReason;
  endReason: EndReason;
  toolOk: number;
  toolFailed: number;
  toolSeq: number;
  /** Each model call's start (epoch ms), length and finish, in order (spans for tracing). */
  modelCalls: Array<{ startedAt: number; durationMs: number; step: number; finish: string }>;
  /** The error that failed the turn (not set for a timeout or cancel). */
  failure: unknown;
  /** The last step's text that was not empty. */
  lastText: string;
  /** Text of the step being streamed, kept so a timeout or cancel can keep it. */
  streaming: string;
  /** Client tool calls the turn ended on, for the caller to run. */
  clientCalls: ModelToolCall[];
}
