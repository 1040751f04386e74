import { firstIssueText } from '@agentd/errors';
import { ownEntry } from '@agentd/input-guards';
import {
  type AgentDefinition,
  type AgentDefinitionInput,
  agentDefinitionSchema,
  DEFAULT_AGENT_ID,
  entityIdSchema,
  OFFLINE_PROVIDER_ID,
} from './config.js';
import { AgentRuntimeError } from './errors.js';
import { issuesOf } from './internal/options.js';
import type { ModelResolver, OperationModel } from './model-resolver.js';
import type { RuntimeContext } from './runtime-context.js';

/** An agent as `agents.get` shows it. */
export type AgentView = AgentDefinition & { agentId: string; builtIn: boolean };

/** Result of `agents.update`. */
export interface AgentUpdateResult {
  agentId: string;
  updated: boolean;
  dryRun: boolean;
  agent: AgentView;
  /** Whether the provider was probed (only when it changed). */
  providerProbed: boolean;
}

/** Result of `agent.getOperationModels`. */
export interface OperationModels {
  agentId: string;
  primaryModel: string;
  providerFamily: string;
  tieringActive: boolean;
  operations: Array<{
    operationType: string;
    model: string;
    provider: string;
    source: 'config' | 'default';
    tieringActive: boolean;
    timeoutMs: number;
    crossProvider: boolean;
    apiKeyConfigured: boolean;
  }>;
}

/** The agents API of the runtime (`AgentRuntime.agents`). */
export interface AgentsApi {
  list(): string[];
  get(agentId: string): AgentView;
  create(input: Record<string, unknown>): Promise<AgentView>;
  update(
    agentId: string,
    patch: Record<string, unknown>,
    options?: { dryRun?: boolean },
  ): Promise<AgentUpdateResult>;
  delete(agentId: string): Promise<{ agentId: string; deleted: true }>;
  suspend(agentId: string): Promise<{ agentId: string; suspended: true; inFlight: number }>;
  resume(agentId: string): Promise<{ agentId: string; resumed: true }>;
  operationModels(agentId: string): OperationModels;
}

/** The agent definitions of the live config, plus the built-in `default` agent. */
export interface AgentRegistry {
  /** The definition of an agent id, or `undefined`. */
  find(agentId: string): AgentDefinition | undefined;
  /** The definition of an agent id; throws `AGENT_NOT_FOUND`. */
  require(agentId: string): AgentDefinition;
  /** The `AGENT_SUSPENDED` error of an agent. */
  suspendedError(agentId: string): AgentRuntimeError;
  /** The public agents API. */
  readonly api: AgentsApi;
}

/** The built-in `default` agent. */
const DEFAULT_AGENT: AgentDefinition = agentDefinitionSchema.parse({
  name: 'default',
  provider: OFFLINE_PROVIDER_ID,
});

/** Creates the agent registry over the context's live `agents` section. */
export function createAgentRegistry(ctx: RuntimeContext, models: ModelResolver): AgentRegistry {
  const { config } = ctx;

  /** The configured agent of that id: own entries only, so `toString` or `constructor` finds none. */
  function configured(agentId: string): AgentDefinition | undefined {
    return ownEntry(config.agents.entries, agentId);
  }

  function find(agentId: string): AgentDefinition | undefined {
    return configured(agentId) ?? (agentId === DEFAULT_AGENT_ID ? DEFAULT_AGENT : undefined);
  }

  function require(agentId: string): AgentDefinition {
    const agent = find(agentId);
    if (!agent)
      throw new AgentRuntimeError('AGENT_NOT_FOUND', `Agent not found: ${agentId}`, { data: { agentId } });
    return agent;
  }

  function view(agentId: string, agent: AgentDefinition): AgentView {
    return { ...agent, agentId, builtIn: configured(agentId) === undefined };
  }

  function store(agentId: string, definition: AgentDefinition): void {
    config.agents = { ...config.agents, entries: { ...config.agents.entries, [agentId]: definition } };
  }

  function checkProvider(definition: AgentDefinition): void {
    if (!models.providerEntry(definition.provider)) {
      throw new AgentRuntimeError(
        'PROVIDER_NOT_FOUND',
        `provider: Provider not found: ${definition.provider}`,
        {
          data: {
            provider: definition.provider,
            issues: [{ path: ['provider'], code: 'custom', message: 'unknown provider' }],
          },
        },
      );
    }
  }

  async function persist(entries: Record<string, Partial<AgentDefinitionInput> | null>): Promise<void> {
    if (ctx.settings.persistAgents) await ctx.settings.persistAgents(entries);
  }

  async function setSuspended(agentId: string, current: AgentDefinition, suspended: boolean): Promise<void> {
    const persisted = configured(agentId) === undefined ? { name: current.name, suspended } : { suspended };
    await persist({ [agentId]: persisted });
    store(agentId, { ...current, suspended });
    ctx.events.emit(suspended ? 'agent:suspended' : 'agent:resumed', {
      agentId,
      inFlight: ctx.running.get(agentId) ?? 0,
    });
  }

  function operationModels(agentId: string): OperationModels {
    const agent = require(agentId);
    const primary = models.resolve(agent, undefined);
    const operation = (
      operationType: string,
      configured: (OperationModel & { timeoutMs?: number | undefined }) | undefined,
    ) => {
      const resolved = configured ? models.resolve(agent, undefined, configured) : primary;
      return {
        operationType,
        model: resolved.model,
        provider: resolved.providerId,
        source: configured ? ('config' as const) : ('default' as const),
        tieringActive: false,
        timeoutMs:
          configured?.timeoutMs ??
          (operationType === 'chat' ? agent.timeouts.turnMs : resolved.entry.timeoutMs),
        crossProvider: resolved.providerId !== primary.providerId,
        apiKeyConfigured: resolved.entry.type === 'offline' || resolved.entry.apiKey !== undefined,
      };
    };
    return {
      agentId,
      primaryModel: primary.model,
      providerFamily: primary.entry.type,
      tieringActive: false,
      operations: [operation('chat', undefined), operation('compaction', agent.operations.compaction)],
    };
  }

  const api: AgentsApi = {
    list() {
      const ids = new Set(Object.keys(config.agents.entries));
      ids.add(DEFAULT_AGENT_ID);
      return [...ids].sort();
    },
    get: (agentId) => view(agentId, require(agentId)),
    async create(raw) {
      const { agentId: requestedId, ...rest } = raw as { agentId?: unknown } & Record<string, unknown>;
      const candidate = typeof requestedId === 'string' ? requestedId : slugify(String(rest.name ?? ''));
      const idCheck = entityIdSchema.safeParse(candidate);
      if (!idCheck.success) {
        throw new AgentRuntimeError(
          'INVALID_OPTIONS',
          `agentId: ${idCheck.error.issues[0]?.message ?? 'invalid'}`,
          {
            data: { issues: [{ path: ['agentId'], code: 'custom', message: 'invalid agent id' }] },
          },
        );
      }
      const agentId = idCheck.data;
      if (find(agentId)) {
        throw new AgentRuntimeError('AGENT_EXISTS', `Agent already exists: ${agentId}`, {
          data: { agentId },
        });
      }
      const definition = parseDefinition(rest);
      checkProvider(definition);
      await persist({ [agentId]: stripDefaults(rest) });
      store(agentId, definition);
      return view(agentId, definition);
    },
    async update(agentId, patch, updateOptions = {}) {
      const current = require(agentId);
      const next = parseDefinition({ ...current, ...patch });
      checkProvider(next);
      const providerChanged =
        next.provider !== current.provider || (patch.model !== undefined && next.model !== current.model);
      let providerProbed = false;
      if (updateOptions.dryRun) {
        if (providerChanged) {
          const provider = await models.freshProvider(models.resolve(next, undefined));
          await provider.probe(AbortSignal.timeout(15_000));
          providerProbed = true;
        }
        return { agentId, updated: false, dryRun: true, agent: view(agentId, next), providerProbed };
      }
      const persisted = configured(agentId) === undefined ? { name: next.name, ...patch } : patch;
      await persist({ [agentId]: persisted });
      store(agentId, next);
      return { agentId, updated: true, dryRun: false, agent: view(agentId, next), providerProbed };
    },
    async delete(agentId) {
      require(agentId);
      if (agentId === DEFAULT_AGENT_ID && configured(agentId) === undefined) {
        throw new AgentRuntimeError(
          'INVALID_OPTIONS',
          'agentId: the built-in default agent cannot be deleted; suspend it instead',
          {
            data: { issues: [{ path: ['agentId'], code: 'custom', message: 'built-in agent' }] },
          },
        );
      }
      await persist({ [agentId]: null });
      const { [agentId]: _removed, ...entries } = config.agents.entries;
      config.agents = { ...config.agents, entries };
      return { agentId, deleted: true };
    },
    async suspend(agentId) {
      await setSuspended(agentId, require(agentId), true);
      return { agentId, suspended: true, inFlight: ctx.running.get(agentId) ?? 0 };
    },
    async resume(agentId) {
      await setSuspended(agentId, require(agentId), false);
      return { agentId, resumed: true };
    },
    operationModels,
  };

  return {
    find,
    require,
    suspendedError: (agentId) =>
      new AgentRuntimeError(
        'AGENT_SUSPENDED',
        `Agent suspended: ${agentId}; it accepts no new messages until resumed`,
        { data: { agentId } },
      ),
    api,
  };
}

/** Validates a definition; the `INVALID_OPTIONS` message names the first failing field without a prefix. */
function parseDefinition(input: Record<string, unknown>): AgentDefinition {
  const result = agentDefinitionSchema.safeParse(input);
  if (result.success) return result.data;
  const issues = issuesOf(result.error);
  throw new AgentRuntimeError('INVALID_OPTIONS', firstIssueText('', issues, '<root>'), { data: { issues } });
}

function slugify(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .replace(/-+$/, '')
    .slice(0, 64);
}

/** Keeps only the keys the caller wrote, so config.yaml stays minimal (defaults stay implicit). */
function stripDefaults(input: Record<string, unknown>): Partial<AgentDefinitionInput> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) if (value !== undefined) out[key] = value;
  return out as Partial<AgentDefinitionInput>;
}
