import type { CallerChannel, ToolImage } from '@agentd/contracts';
import { matchesAnyToolPattern, TOOL_NAME } from '@agentd/input-guards';
import { z } from 'zod';
import type { AgentDefinition } from './config.js';
import { AgentRuntimeError } from './errors.js';
import { digest, EVIDENCE_SCHEMA_VERSION, type TrajectoryRecord } from '@agentd/evidence';
import { toModelMessage } from './internal/messages.js';
import { createOffloadReadTool } from './offload.js';
import type { ModelToolCall, ModelToolSpec } from './provider.js';
import type { RuntimeContext } from './runtime-context.js';
import type { NewMessage } from './session-store.js';
import { estimateMessageTokens } from './tokens.js';
import {
  allowListGate,
  breakerGate,
  inputGate,
  offloadGate,
  type ToolGate,
  type ToolGateCall,
  type ToolGateResult,
  type ToolPolicy,
} from './tool-gates.js';
import type { AgentTool } from './types.js';

/** One tool call of a turn, as the turn loop hands it to the runner. */
export interface ToolRun {
  agent: AgentDefinition;
  agentId: string;
  /** The turn's narrowing of the agent's tools, if any. */
  allowedTools: readonly string[] | undefined;
  sessionKey: string;
  traceId: string;
  /** The turn's memory tenant, handed to tools in their context. */
  memoryTenant?: string | undefined;
  /** The chat the turn answers, handed to tools in their context. */
  callerChannel?: CallerChannel | undefined;
  call: ModelToolCall;
  step: number;
  seq: number;
  /** The turn's signal. */
  signal: AbortSignal;
}

/** What a call produced: the tool message for the history and the trajectory record. */
export interface ToolOutcome {
  message: NewMessage;
  record: TrajectoryRecord;
  ok: boolean;
  /** Images the tool attached for the model's next step (never stored with the message). */
  images?: ToolImage[];
}

/** The registered tools and the single path every tool call takes. */
export interface ToolRunner {
  /** Adds a tool; a bad or taken name, or params without a JSON Schema, throws `INVALID_OPTIONS`. */
  register(tool: AgentTool): void;
  /** Removes tools by name (unknown names are ignored); turns from then on neither see nor run them. */
  unregister(names: readonly string[]): void;
  /** Names of the registered tools, sorted. */
  names(): string[];
  /** Whether an agent may call a tool in a turn. */
  allowed: ToolPolicy;
  /** The tool specs offered to the model for a turn of agent `agentId`. */
  offered(agent: AgentDefinition, narrowed: readonly string[] | undefined, agentId?: string): ModelToolSpec[];
  /** Runs one call through the gate chain and the handler. Never throws for a tool failure. */
  run(run: ToolRun): Promise<ToolOutcome>;
  /** The gate chain, in order (for diagnostics and tests). */
  readonly gates: readonly ToolGate[];
}

/**
 * Creates the tool runner with the built-in `offload_read` tool, the given tools and the gate
 * chain `allow_list`, `input`, `breaker`, `extraGates…`, `offload`.
 */
export function createToolRunner(ctx: RuntimeContext, extraGates: readonly ToolGate[] = []): ToolRunner {
  const tools = new Map<string, AgentTool>();
  const schemas = new Map<string, Record<string, unknown>>();

  const allowed: ToolPolicy = (agent, name, narrowed, agentId) => {
    if (
      matchesAnyToolPattern(ctx.config.agents.toolDenylist, name) ||
      matchesAnyToolPattern(agent.toolDenylist, name)
    )
      return false;
    if (narrowed && !matchesAnyToolPattern(narrowed, name)) return false;
    const only = tools.get(name)?.agents;
    if (only && agentId !== undefined && !only.includes('*') && !only.includes(agentId)) return false;
    return matchesAnyToolPattern(agent.tools, name);
  };

  const gates: ToolGate[] = [
    allowListGate(allowed),
    inputGate(),
    breakerGate(ctx),
    ...extraGates,
    offloadGate(ctx, allowed),
  ];

  function register(tool: AgentTool): void {
    if (!tool || typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) {
      throw new AgentRuntimeError(
        'INVALID_OPTIONS',
        `registerTools: invalid tool name ${JSON.stringify(tool?.name)}`,
      );
    }
    if (tools.has(tool.name)) {
      throw new AgentRuntimeError('INVALID_OPTIONS', `registerTools: tool already registered: ${tool.name}`);
    }
    let schema: Record<string, unknown>;
    try {
      schema = z.toJSONSchema(tool.params, { io: 'input', unrepresentable: 'any' }) as Record<
        string,
        unknown
      >;
    } catch (error) {
      throw new AgentRuntimeError(
        'INVALID_OPTIONS',
        `registerTools: ${tool.name}: params cannot be expressed as JSON Schema`,
        { cause: error },
      );
    }
    delete schema.$schema;
    tools.set(tool.name, tool);
    schemas.set(tool.name, schema);
  }

  function offered(
    agent: AgentDefinition,
    narrowed: readonly string[] | undefined,
    agentId?: string,
  ): ModelToolSpec[] {
    const specs: ModelToolSpec[] = [];
    for (const [name, tool] of tools) {
      if (!allowed(agent, name, narrowed, agentId)) continue;
      specs.push({ name, description: tool.description, inputSchema: schemas.get(name) ?? {} });
    }
    return specs;
  }

  async function run(input: ToolRun): Promise<ToolOutcome> {
    const started = performance.now();
    const { call } = input;
    const gateCall: ToolGateCall = {
      toolName: call.toolName,
      toolCallId: call.toolCallId,
      input: call.input,
      params: undefined,
      tool: tools.get(call.toolName),
      agentId: input.agentId,
      agent: input.agent,
      sessionKey: input.sessionKey,
      traceId: input.traceId,
      memoryTenant: input.memoryTenant,
      callerChannel: input.callerChannel,
      step: input.step,
      seq: input.seq,
      allowedTools: input.allowedTools,
      signal: input.signal,
    };
    let result: ToolGateResult | undefined;
    for (const gate of gates) {
      if (!gate.before) continue;
      const verdict = await gate.before(gateCall);
      if (!verdict.allow) {
        result = failure(false, verdict.errorKind, verdict.message);
        break;
      }
    }
    const images: ToolImage[] = [];
    result ??= await invoke(gateCall, images);
    for (const gate of gates) if (gate.after) result = await gate.after(gateCall, result);
    return outcome(input, result, Math.round((performance.now() - started) * 1000) / 1000, images);
  }

  /**
   * Runs the handler under the agent's tool timeout and the turn's signal, and serialises its
   * value. The handler's signal aborts with a `TimeoutError` at `timeouts.toolMs` (the call
   * fails as `timeout`) or with the turn's reason when the turn ends (`cancelled`); either way
   * the call stops waiting for a handler that ignores its signal. The one listener it adds is on
   * the call's own signal and is removed when the call settles, so a turn of many calls piles
   * nothing on the turn's signal.
   */
  async function invoke(call: ToolGateCall, images: ToolImage[]): Promise<ToolGateResult> {
    const { tool, agent } = call;
    if (!tool) return failure(false, 'unknown_tool', `Unknown tool: ${call.toolName}`);
    const deadline = AbortSignal.timeout(agent.timeouts.toolMs);
    const signal = AbortSignal.any([call.signal, deadline]);
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    let value: unknown;
    try {
      value = await Promise.race([
        tool.handler(call.params, {
          agentId: call.agentId,
          sessionKey: call.sessionKey,
          signal,
          traceId: call.traceId,
          ...(call.memoryTenant !== undefined ? { memoryTenant: call.memoryTenant } : {}),
          ...(call.callerChannel !== undefined ? { callerChannel: call.callerChannel } : {}),
          attachImages: (list) => void images.push(...list),
        }),
        stopped,
      ]);
    } catch (error) {
      if (call.signal.aborted)
        return failure(true, 'cancelled', `Tool ${call.toolName} stopped: the turn ended`);
      if (deadline.aborted) {
        return failure(true, 'timeout', `Tool ${call.toolName} exceeded ${agent.timeouts.toolMs} ms`);
      }
      return failure(true, 'tool_error', error instanceof Error ? error.message : String(error));
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
    let text: string;
    try {
      text = JSON.stringify(value ?? null) ?? 'null';
    } catch {
      return failure(
        true,
        'tool_error',
        `Tool ${call.toolName} returned a value that is not JSON-serialisable`,
      );
    }
    return { ran: true, text, content: text };
  }

  function outcome(
    input: ToolRun,
    result: ToolGateResult,
    durationMs: number,
    images: ToolImage[],
  ): ToolOutcome {
    const { call } = input;
    const ok = result.errorKind === undefined;
    const message: NewMessage = {
      role: 'tool',
      content: result.content,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      ...(ok ? {} : { isError: true }),
      tokens: 0,
    };
    message.tokens = estimateMessageTokens(toModelMessage(message));
    const record: TrajectoryRecord = {
      v: EVIDENCE_SCHEMA_VERSION,
      ts: ctx.now(),
      sessionKey: input.sessionKey,
      traceId: input.traceId,
      agentId: input.agentId,
      type: 'tool_call',
      seq: input.seq,
      step: input.step,
      toolName: call.toolName,
      toolCallId: call.toolCallId,
      ok,
      durationMs,
      ...(result.errorKind
        ? { errorKind: result.errorKind, errorPreview: (result.errorMessage ?? '').slice(0, 200) }
        : {}),
      resultBytes: Buffer.byteLength(result.text),
      resultDigest: digest(result.text),
    };
    return { message, record, ok, ...(ok && images.length > 0 ? { images } : {}) };
  }

  for (const tool of [createOffloadReadTool(ctx.dataDir) as AgentTool, ...ctx.settings.tools]) register(tool);

  return {
    register,
    unregister(names) {
      for (const name of names) {
        tools.delete(name);
        schemas.delete(name);
      }
    },
    names: () => [...tools.keys()].sort(),
    allowed,
    offered,
    run,
    gates,
  };
}

/** The result of a failed call: the model gets `{"error": message}`. */
function failure(ran: boolean, errorKind: string, errorMessage: string): ToolGateResult {
  const text = JSON.stringify({ error: errorMessage });
  return { ran, errorKind, errorMessage, text, content: text };
}
