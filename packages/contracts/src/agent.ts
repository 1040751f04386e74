import type { output, ZodType } from 'zod';

/** Who started a turn; decides the session kind (`main`, `hook`, `cron`, `graph`, `subagent`). */
export type TurnOrigin = 'rpc' | 'hook' | 'cron' | 'graph' | 'heartbeat' | 'subagent';

/** Token counts of a turn, as the contract's `tokensUsed`. */
export interface TokensUsed {
  input: number;
  output: number;
  total: number;
}

/** One agent turn to run. */
export interface AgentTurnRequest {
  /** Agent to run; the runtime's default agent when absent. */
  agentId?: string;
  /** The user message of the turn. */
  message: string;
  /** Session to continue; a new one of the origin's kind when absent. */
  sessionKey?: string;
  /** Model override for this turn. */
  model?: string;
  /** Longest the turn may take, in ms. */
  timeoutMs?: number;
  /** Cancels the turn when aborted. */
  signal?: AbortSignal;
  /** Who started the turn. @default 'rpc' */
  origin?: TurnOrigin;
  /**
   * Names this turn once and for all: when a turn with this key has already been committed,
   * it is not run again and its recorded result is answered. A queue that may repeat a turn
   * after a crash (a webhook delivery) passes its entry's id, so the turn runs exactly once.
   */
  turnKey?: string;
  /**
   * The memory tenant of the turn: what its automatic recall searches and its memory tools
   * read and write. Set for a tenant-bound caller's turns; `default` when absent.
   */
  memoryTenant?: string;
  /**
   * The chat an inbound channel message came from, when the turn answers one: tools that
   * answer with media (a generated image) send it there. Set by the channels, never by a model.
   */
  callerChannel?: CallerChannel;
}

/** A chat on a channel: the channel type (`telegram`, `slack`, …) and the chat id there. */
export interface CallerChannel {
  channelType: string;
  channelId: string;
}

/** What one agent turn produced. */
export interface AgentTurnResult {
  response: string;
  tokensUsed: TokensUsed;
  /** The contract's `finishReason` (`stop`, `length`, `error`, `timeout`, `cancelled`, ...). */
  finishReason: string;
  sessionKey: string;
  /** The turn's trace id (answers, logs and spans carry it), where the runner has one. */
  traceId?: string;
}

/**
 * Runs agent turns: what webhooks, cron, graph nodes and the heartbeat call. The agent
 * runtime implements it; other packages take it by injection and need no runtime dependency.
 */
export interface AgentTurnRunner {
  runTurn(request: AgentTurnRequest): Promise<AgentTurnResult>;
}

/** What a tool handler learns about the turn that called it. */
export interface ToolContext {
  /** Agent running the turn. */
  agentId: string;
  /** Session the turn belongs to (string form). */
  sessionKey: string;
  /** Aborted when the turn is cancelled or times out; long tools should stop then. */
  signal: AbortSignal;
  /** Trace id of the turn, for the tool's own logs. */
  traceId?: string | undefined;
  /** The turn's memory tenant (see `AgentTurnRequest.memoryTenant`), when it has one. */
  memoryTenant?: string | undefined;
  /** The chat the turn answers (see `AgentTurnRequest.callerChannel`), when it answers one. */
  callerChannel?: CallerChannel | undefined;
  /**
   * Hands images to the model with this call's result (an MCP tool's `image` content): the
   * model's next step sees them as images, not text. They are not stored with the session.
   */
  attachImages?: ((images: ToolImage[]) => void) | undefined;
}

/** An image a tool gives the model: base64 `data` of a `mediaType` (`image/png`). */
export interface ToolImage {
  data: string;
  mediaType: string;
}

/**
 * A tool the model may call. Packages (memory, browser, graph, ...) provide tools; the
 * daemon registers them with the agent runtime. `params` is converted to JSON Schema for
 * the model and validates the model's input before `handler` runs.
 */
export interface AgentTool<P = unknown> {
  /** Unique name, snake_case or dotted, e.g. `memory_search`. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** Zod schema of the tool input. */
  params: ZodType<P>;
  /**
   * The agents the tool is offered to and may be called by (ids, or `*`), when not every agent:
   * the tools of an MCP server configured for some agents. Each agent's own allow-list and
   * denylist still apply on top. @default every agent
   */
  agents?: readonly string[] | undefined;
  /**
   * Whether the tool keeps within the turn's tenant: it reads and writes only what the turn's
   * memory tenant or session owns (memory, the session's own sub-agents and offloads, graphs
   * authored as the tenant) or nothing stored at all. A tool that does not say so may act on
   * state every tenant shares (an agent's workspace, the browser, a terminal drive, the jail,
   * an MCP server) and the runtime refuses it in the turns of a tenant. @default false
   */
  tenantScoped?: boolean | undefined;
  /** Runs the tool; the result must be JSON-serialisable. A throw becomes an error result for the model. */
  handler(params: P, context: ToolContext): Promise<unknown>;
}

/**
 * One finished turn as the runtime's turn observer hands it over (in process; never an event
 * payload). The learning layer resolves outcomes from them.
 */
export interface ObservedTurn {
  agentId: string;
  sessionKey: string;
  traceId: string;
  origin: string;
  /** The user message of the turn. */
  message: string;
  /** The turn's answer (a learning judge reads it); the runtime always sets it. */
  response?: string;
  endReason: string;
  /** The turn's tool calls in order: name and whether it succeeded. */
  tools: ReadonlyArray<{ name: string; ok: boolean }>;
  synthetic: boolean;
  at: number;
}

/**
 * The signature of a package's typed tool builder, `tool(name, description, params, handler)`:
 * `handler` gets what `params` parses to, so a package's tool list reads as one call per tool
 * with no casts. Contracts hold no runtime code, so each package implements it in one line:
 * `const tool: DefineTool = (name, description, params, handler) => ({ name, description, params, handler });`
 */
export type DefineTool = <S extends ZodType>(
  name: string,
  description: string,
  params: S,
  handler: (params: output<S>, context: ToolContext) => Promise<unknown>,
) => AgentTool;

/**
 * The heartbeat as a webhook `wake` action sees it: `wakeNow` runs a beat at once
 * (coalesced with other wakes), `queueForNextBeat` hands text to the next scheduled beat.
 * The cron package provides it; the webhooks package calls it.
 */
export interface WakeTarget {
  /** Runs a heartbeat now; `text`, when given, is included in that beat's message. */
  wakeNow(text?: string): void;
  /** Queues `text` for the next heartbeat, whenever it runs. */
  queueForNextBeat(text: string): void;
}

/**
 * A finished unit of work for tracing: handed over in process (never an event payload) by the
 * packages that do the work, to whatever exports spans (`@agentd/telemetry`).
 */
export interface FinishedSpan {
  name: 'agent.turn' | 'model.call' | 'tool.call' | 'webhook.job' | 'channel.delivery';
  /** agentd's trace id of the work (the `traceId` of answers and logs). */
  traceId: string;
  /** Epoch ms. */
  startedAt: number;
  durationMs: number;
  ok: boolean;
  /** Ids, counts and closed enums only: never message text, prompts or tool input. */
  attributes: Record<string, string | number | boolean>;
}

/** Receives finished spans; must not throw. */
export type SpanSink = (span: FinishedSpan) => void;
