import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { type AgentsApi, createAgentRegistry } from './agent-registry.js';
import { type BillingApi, createBillingApi } from './billing-service.js';
import { agentsSectionSchema, contextEngineSectionSchema, providersSectionSchema } from './config.js';
import type { EvidenceRolls } from '@agentd/evidence';
import { parseOptions } from './internal/options.js';
import { agentRuntimeMigrationSet, MIGRATION_PACKAGE } from './migrations.js';
import { type CompletionRequest, type CompletionResult, completeWithAgentModel } from './model-complete.js';
import { createModelResolver, type ModelView, type ProviderView } from './model-resolver.js';
import { createRuntimeContext } from './runtime-context.js';
import {
  type AgentRuntimeOptions,
  evidenceRotationSchema,
  resolveRuntimeOptions,
  type SessionMemory,
  type TurnRecall,
  type TurnObserver,
  type TurnPlacement,
  type TurnSkills,
} from './runtime-options.js';
import { createSessionService, type SessionsApi } from './session-service.js';
import { tenantGate } from './tenant-gate.js';
import { createToolRunner } from './tool-runner.js';
import { createTurnLoop } from './turn-loop.js';
import { type ContextDagApi, createContextDagApi } from './context-dag.js';
import type { AgentTool, TurnRequest, TurnResult } from './types.js';

/** One tool call {@link AgentRuntime.invokeTool} runs. */
export interface ToolInvocation {
  agentId: string;
  sessionKey: string;
  traceId?: string | undefined;
  toolName: string;
  input: unknown;
  signal: AbortSignal;
  /**
   * The memory tenant of the turn the call comes from (a jailed script's turn): the tools
   * get it, and the tenant gate narrows the call as it narrows that turn's own calls.
   */
  memoryTenant?: string | undefined;
}

/** What {@link AgentRuntime.invokeTool} answers. */
export type ToolInvocationResult =
  | { ok: true; value: unknown }
  | { ok: false; errorKind: string; message: string };

/** The agent runtime. */
export interface AgentRuntime {
  /** Applies migrations; call once before anything else. */
  start(): Promise<void>;
  /** Runs one turn (serialised per session, parallel across sessions). */
  runTurn(request: TurnRequest): Promise<TurnResult>;
  /** One call of an agent's model outside any turn: no tools, session or memory (MCP sampling). */
  complete(request: CompletionRequest): Promise<CompletionResult>;
  /** Adds tools; a name already registered throws `INVALID_OPTIONS`. */
  registerTools(tools: AgentTool[]): void;
  /** Removes tools by name (unknown names are ignored): tools whose source went away (an MCP server's). */
  unregisterTools(names: readonly string[]): void;
  /** Names of the registered tools. */
  toolNames(): string[];
  /** Replaces agents, providers and context caps from a new config (hot reload). */
  applyConfig(config: {
    agents?: z.input<typeof agentsSectionSchema>;
    providers?: z.input<typeof providersSectionSchema>;
    contextEngine?: z.input<typeof contextEngineSectionSchema>;
    /** `observability.logRotation`: evidence files roll by it from their next write. */
    evidenceRotation?: z.input<typeof evidenceRotationSchema>;
  }): void;
  /**
   * Swaps the memory the runtime works with, from the next turn (hot reload of
   * `memory.enabled`): session deletes, automatic recall and the memory tools. The tools given
   * by the previous call are withdrawn first; `undefined` turns memory off (no agent recalls,
   * the tools are gone, session deletes leave memory alone).
   * @throws {AgentRuntimeError} `INVALID_OPTIONS` for a tool name taken by another tool.
   */
  useMemory(memory: { memory?: SessionMemory; recall?: TurnRecall; tools?: AgentTool[] } | undefined): void;
  /**
   * Lists skills in the prompts of agents offered `skills.readTool`, from the next turn;
   * `undefined` stops it.
   */
  useSkills(skills: TurnSkills | undefined): void;
  /** Calls `observer` after every recorded turn (from the next turn); `undefined` stops it. */
  useTurnObserver(observer: TurnObserver | undefined): void;
  /** Checks every turn's placement first (from the next turn); `undefined` stops it. */
  useTurnPlacement(placement: TurnPlacement | undefined): void;
  /** The tools of `names` that `agentId` may not use (its allow-list and the denylists); all of them for an unknown agent. */
  toolsDenied(agentId: string, names: readonly string[]): string[];
  /**
   * Runs one tool call outside a model step (a capability-socket call of a jailed script): the
   * same gate chain and handler a model's call takes, in `sessionKey` as `agentId` and in the
   * turn's `memoryTenant`. Never
   * throws for a tool failure; answers the tool's value or why it failed.
   */
  invokeTool(call: ToolInvocation): Promise<ToolInvocationResult>;
  readonly agents: AgentsApi;
  /** Configured providers and models, without keys. */
  models(): { providers: ProviderView[]; models: ModelView[] };
  /** Prompt-cache figures from billing. */
  cacheStats(agentId?: string): Promise<Record<string, unknown>>;
  readonly sessions: SessionsApi;
  /** The context DAG: conversations and their summary trees (`context.*`). */
  readonly context: ContextDagApi;
  readonly billing: BillingApi;
  /** Turns running now. */
  readonly inFlight: number;
  /** Roll counts of the evidence files this runtime writes (for the obs readers in the same process). */
  readonly evidenceRolls: EvidenceRolls;
  /** Waits for running turns and evidence writes; later turns are refused with `CLOSED`. */
  close(): Promise<void>;
}

/**
 * Creates the agent runtime. Call `start()` before use. This module only wires the parts,
 * which share one {@link RuntimeContext}: the model resolver, the agent registry, the tool
 * runner (with its gate chain), the turn loop, the session service and billing.
 */
export function createAgentRuntime(options: AgentRuntimeOptions): AgentRuntime {
  const ctx = createRuntimeContext(resolveRuntimeOptions(options));
  const models = createModelResolver(ctx);
  const agents = createAgentRegistry(ctx, models);
  // The tenant gate is the runtime's own, ahead of the embedder's gates: no wiring can leave a
  // tenant's turn without it, on any path a call takes.
  const tools = createToolRunner(ctx, [tenantGate(), ...ctx.settings.toolGates]);
  const turns = createTurnLoop(ctx, agents, models, tools);
  let memoryTools: string[] = [];
  return {
    async start() {
      await ctx.db.migrate(MIGRATION_PACKAGE, agentRuntimeMigrationSet);
    },
    runTurn: turns.runTurn,
    complete: (request) => completeWithAgentModel(agents, models, request),
    registerTools(list) {
      for (const tool of list) tools.register(tool);
    },
    unregisterTools(names) {
      tools.unregister(names);
    },
    toolNames: tools.names,
    applyConfig(config) {
      if (config.agents !== undefined) {
        ctx.config.agents = parseOptions(agentsSectionSchema, config.agents, 'applyConfig.agents');
      }
      if (config.providers !== undefined) {
        ctx.config.providers = parseOptions(
          providersSectionSchema,
          config.providers,
          'applyConfig.providers',
        );
        // Re-applied providers resolve their keys again (a secret's value may have changed).
        models.forgetProviders();
      }
      if (config.contextEngine !== undefined) {
        ctx.config.contextEngine = parseOptions(
          contextEngineSectionSchema,
          config.contextEngine,
          'applyConfig.contextEngine',
        );
      }
      if (config.evidenceRotation !== undefined) {
        ctx.evidence.applyRotation(
          parseOptions(evidenceRotationSchema, config.evidenceRotation, 'applyConfig.evidenceRotation'),
        );
      }
    },
    useMemory(memory) {
      tools.unregister(memoryTools);
      memoryTools = [];
      for (const tool of memory?.tools ?? []) {
        tools.register(tool);
        memoryTools.push(tool.name);
      }
      ctx.settings.memory = memory?.memory;
      ctx.settings.recall = memory?.recall;
    },
    useSkills(skills) {
      ctx.settings.skills = skills;
    },
    useTurnObserver(observer) {
      ctx.settings.observer = observer;
    },
    useTurnPlacement(placement) {
      ctx.settings.placement = placement;
    },
    toolsDenied(agentId, names) {
      const agent = agents.find(agentId);
      return names.filter((name) => !agent || !tools.allowed(agent, name, undefined));
    },
    async invokeTool(call) {
      const agent = agents.find(call.agentId);
      if (!agent)
        return { ok: false, errorKind: 'unknown_agent', message: `Agent not found: ${call.agentId}` };
      const outcome = await tools.run({
        agent,
        agentId: call.agentId,
        allowedTools: undefined,
        sessionKey: call.sessionKey,
        memoryTenant: call.memoryTenant,
        traceId: call.traceId ?? randomUUID(),
        call: { toolCallId: `invoke_${randomUUID()}`, toolName: call.toolName, input: call.input },
        step: 0,
        seq: 0,
        signal: call.signal,
      });
      const record = outcome.record as { errorKind?: string; errorPreview?: string };
      if (!outcome.ok) {
        return {
          ok: false,
          errorKind: record.errorKind ?? 'tool_error',
          message: record.errorPreview ?? `Tool ${call.toolName} failed`,
        };
      }
      try {
        return { ok: true, value: JSON.parse(outcome.message.content) as unknown };
      } catch {
        // An offloaded result is a plain-text reference, not JSON: hand it over as it is.
        return { ok: true, value: outcome.message.content };
      }
    },
    agents: agents.api,
    models: models.list,
    async cacheStats(agentId) {
      if (agentId !== undefined) agents.require(agentId);
      return { ...(agentId ? { agentId } : {}), ...(await ctx.store.cacheStats(agentId)) };
    },
    sessions: createSessionService(ctx, agents, models),
    context: createContextDagApi(ctx),
    billing: createBillingApi(ctx),
    evidenceRolls: ctx.evidence.rolls,
    get inFlight() {
      return turns.inFlight();
    },
    async close() {
      await turns.close();
      await ctx.evidence.flush();
    },
  };
}
