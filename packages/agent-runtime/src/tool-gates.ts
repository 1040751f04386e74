import type { CallerChannel } from '@agentd/contracts';
import type { AgentDefinition } from './config.js';
import { digest, writeOffload } from '@agentd/evidence';
import { OFFLOAD_READ_TOOL } from './offload.js';
import type { RuntimeContext } from './runtime-context.js';
import type { ToolBreakerEvent } from './tool-breaker.js';
import type { AgentTool } from './types.js';

/** Longest tool result (characters of JSON) handed back to the model; longer ones are offloaded. */
export const MAX_TOOL_RESULT_CHARS = 100_000;

/** A tool call on its way through the gates (see {@link ToolGate}). */
export interface ToolGateCall {
  /** The tool the model named. */
  readonly toolName: string;
  /** The model's id of this call. */
  readonly toolCallId: string;
  /** The model's raw input. */
  readonly input: unknown;
  /** The input as the tool's `params` parsed it; set by the built-in `input` gate. */
  params: unknown;
  /** The registered tool; `undefined` when the model named an unknown tool. */
  readonly tool: AgentTool | undefined;
  /** The agent running the turn, and its definition. */
  readonly agentId: string;
  readonly agent: AgentDefinition;
  readonly sessionKey: string;
  readonly traceId: string;
  /** The turn's memory tenant, when it has one (tools get it in their context). */
  readonly memoryTenant?: string | undefined;
  /** The chat the turn answers, when it answers an inbound channel message. */
  readonly callerChannel?: CallerChannel | undefined;
  /** The model step (1-based) that asked for the call. */
  readonly step: number;
  /** The call's number within the turn (the trajectory's `seq`). */
  readonly seq: number;
  /** The turn's narrowing of the agent's tools (`TurnRequest.allowedTools`), if any. */
  readonly allowedTools: readonly string[] | undefined;
  /** Aborted when the turn ends (cancel, timeout). */
  readonly signal: AbortSignal;
}

/** What a before-gate decides: let the call go on, or answer it with an error result at once. */
export type ToolGateVerdict =
  | { allow: true }
  | {
      allow: false;
      /** The trajectory's `errorKind`, e.g. `denied`. */
      errorKind: string;
      /** The error the model is given (`{"error": message}`). */
      message: string;
    };

/** The result of a call as the after-gates see it; an after-gate returns it, changed or not. */
export interface ToolGateResult {
  /** Whether the tool's handler ran (false when a before-gate denied the call). */
  readonly ran: boolean;
  /** Set when the call failed: the trajectory's `errorKind`. */
  errorKind?: string | undefined;
  /** The failure's message (the model gets it as `{"error": message}`). */
  errorMessage?: string | undefined;
  /** The full serialised result (JSON); the trajectory's `resultBytes` and `resultDigest` describe it. */
  text: string;
  /** What the model is given; starts equal to `text`. */
  content: string;
}

/**
 * One gate of the tool runner's chain. Every tool call passes the chain: the `before` parts
 * run in order until one denies (the handler then does not run and the denial is the
 * result); then every `after` part runs in order on the result, whether the handler ran or
 * not (`result.ran` says which). The built-in chain is `allow_list` (unknown and not allowed
 * tools), `input` (the tool's params), `breaker` (the per-session circuit breaker), then
 * the `toolGates` option, then `offload` (cuts large results for the model).
 */
export interface ToolGate {
  /** Names the gate in docs and diagnostics. */
  readonly name: string;
  /** Decides whether the call goes on. */
  before?(call: ToolGateCall): ToolGateVerdict | Promise<ToolGateVerdict>;
  /** Sees (and may replace) the result. */
  after?(call: ToolGateCall, result: ToolGateResult): ToolGateResult | Promise<ToolGateResult>;
}

/**
 * Whether an agent may call a tool in a turn (denylists, the turn's narrowing, the agent's
 * `tools`, and the tool's own `agents` when `agentId` is given).
 */
export type ToolPolicy = (
  agent: AgentDefinition,
  name: string,
  narrowed: readonly string[] | undefined,
  agentId?: string,
) => boolean;

const ALLOW: ToolGateVerdict = { allow: true };

/** The ids of a call, in the order the `tool:breaker` and `offload:written` events carry them. */
function callIds(call: ToolGateCall) {
  const { sessionKey, agentId, traceId, toolName, toolCallId, seq } = call;
  return { sessionKey, agentId, traceId, toolName, toolCallId, seq };
}

function deny(errorKind: string, message: string): ToolGateVerdict {
  return { allow: false, errorKind, message };
}

/** Refuses unknown tools and tools the agent (or the turn) does not allow. */
export function allowListGate(allowed: ToolPolicy): ToolGate {
  return {
    name: 'allow_list',
    before(call) {
      if (!call.tool) return deny('unknown_tool', `Unknown tool: ${call.toolName}`);
      if (!allowed(call.agent, call.toolName, call.allowedTools, call.agentId)) {
        return deny('denied', `Tool not allowed for this agent: ${call.toolName}`);
      }
      return ALLOW;
    },
  };
}

/** Validates the model's input with the tool's `params` and hands the parsed value on. */
export function inputGate(): ToolGate {
  return {
    name: 'input',
    before(call) {
      if (!call.tool) return deny('unknown_tool', `Unknown tool: ${call.toolName}`);
      const checked = call.tool.params.safeParse(call.input);
      if (!checked.success) {
        return deny(
          'invalid_input',
          `Invalid input for ${call.toolName}: ${checked.error.issues
            .map((issue) => `${issue.path.join('.') || '<root>'}: ${issue.message}`)
            .join('; ')}`,
        );
      }
      call.params = checked.data;
      return ALLOW;
    },
  };
}

/** The per-session circuit breaker: refuses a tool that keeps failing, records the outcomes of runs. */
export function breakerGate(ctx: RuntimeContext): ToolGate {
  const emit = (call: ToolGateCall, event: ToolBreakerEvent, consecutiveFailures: number): void => {
    ctx.events.emit('tool:breaker', { ...callIds(call), event, consecutiveFailures, ts: ctx.now() });
    const { agentId, traceId, toolName } = call;
    const fields = { agentId, traceId, toolName, consecutiveFailures };
    if (event === 'opened') {
      ctx.logger.warn(
        {
          ...fields,
          hint: `the tool failed ${consecutiveFailures} times in a row in this session and is refused until its cooldown ends; fix the tool or raise toolBreaker.failureThreshold of the agent`,
          errorKind: 'dependency',
        },
        'tool breaker opened',
      );
    } else {
      ctx.logger.info(fields, `tool breaker ${event}`);
    }
  };
  return {
    name: 'breaker',
    before(call) {
      const admission = ctx.breakers.admit(call.sessionKey, call.toolName, call.agent.toolBreaker, ctx.now());
      if (!admission.allowed) {
        return deny(
          'breaker_open',
          `Tool ${call.toolName} is unavailable for now: it failed ${admission.consecutiveFailures} times in a row ` +
            `in this session, so it was not run. It may be tried again in about ${Math.ceil(admission.retryInMs / 1000)} s; ` +
            'until then continue without it or tell the user it is unavailable.',
        );
      }
      if (admission.transition) {
        emit(call, admission.transition.event, admission.transition.consecutiveFailures);
      }
      return ALLOW;
    },
    after(call, result) {
      // Only the handler's own outcomes move the breaker.
      if (!result.ran) return result;
      const transition = ctx.breakers.record(
        call.sessionKey,
        call.toolName,
        call.agent.toolBreaker,
        result.errorKind,
        ctx.now(),
      );
      if (transition) emit(call, transition.event, transition.consecutiveFailures);
      return result;
    },
  };
}

/**
 * Cuts a result longer than {@link MAX_TOOL_RESULT_CHARS} for the model: the model sees the
 * head and a pointer; the whole result goes to `obs/offloads/` for the post-mortem (and for
 * `offload_read`, where the agent allows it).
 */
export function offloadGate(ctx: RuntimeContext, allowed: ToolPolicy): ToolGate {
  return {
    name: 'offload',
    async after(call, result) {
      const { text } = result;
      if (text.length <= MAX_TOOL_RESULT_CHARS) return result;
      const { sessionKey, agentId, traceId, toolName, toolCallId, seq } = call;
      const offload = await writeOffload({
        dataDir: ctx.dataDir,
        sessionKey,
        traceId,
        toolCallId,
        seq,
        ts: ctx.now(),
        text,
      });
      const cut = text.length - MAX_TOOL_RESULT_CHARS;
      const readable = offload.resolved && allowed(call.agent, OFFLOAD_READ_TOOL, call.allowedTools);
      const pointer = offload.resolved
        ? `the full result (${offload.bytes} bytes) is stored at ${offload.diskPathRel} in the data directory${
            readable
              ? `; read on with ${OFFLOAD_READ_TOOL} {"path":"${offload.diskPathRel}","offset":${MAX_TOOL_RESULT_CHARS}}`
              : ''
          }`
        : `the full result (${offload.bytes} bytes) was not stored`;
      if (offload.reason === 'write_failed') {
        ctx.logger.warn(
          {
            err: offload.error,
            agentId,
            traceId,
            toolName,
            bytes: offload.bytes,
            hint: 'the large tool result was only kept truncated; check free space and permissions of the obs/offloads directory',
            errorKind: 'resource',
          },
          'tool result offload failed',
        );
      }
      ctx.events.emit('offload:written', {
        ...callIds(call),
        bytes: offload.bytes,
        diskPathRel: offload.diskPathRel,
        resultDigest: digest(text),
        resolved: offload.resolved,
      });
      return {
        ...result,
        content: `${text.slice(0, MAX_TOOL_RESULT_CHARS)}… [truncated ${cut} characters; ${pointer}]`,
      };
    },
  };
}
