import { pathToFileURL } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type {
  ClientCapabilities,
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequest,
  ElicitResult,
  ListRootsResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpServerEntry } from '../config.js';

/** The approval rules' answer (the approvals service's `ApprovalVerdict`, structurally). */
export type McpApprovalVerdict = { allow: true; via: string } | { allow: false; via: string; reason: string };

/** One completion by an agent's own model, for a server's `sampling/createMessage`. */
export interface McpCompletionRequest {
  agentId: string;
  /** The server's `systemPrompt`, when it sent one. */
  system?: string | undefined;
  /** The conversation, text only. */
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
  /** The server's `maxTokens`. */
  maxOutputTokens: number;
  signal: AbortSignal;
}

/** What the agent's model answered. */
export interface McpCompletion {
  text: string;
  /** The model that answered (`provider/model`). */
  model: string;
  /** agentd's finish reason: `stop` and `length` are sent as MCP's `endTurn` and `maxTokens`. */
  finishReason: string;
}

const STOP_REASONS: Readonly<Record<string, string>> = { stop: 'endTurn', length: 'maxTokens' };

/**
 * What agentd answers when a server asks something of its client. Each capability is
 * declared to servers only when its hook is given: `roots` with `workspaceOf`, `sampling` with
 * `complete`, `elicitation` (form mode) with `approve`.
 */
export interface McpClientHooks {
  /** An agent's workspace directory, offered as a `file://` root (`roots/list`). */
  workspaceOf?: ((agentId: string) => string | undefined) | undefined;
  /** Every agent id, for the roots of a server configured for `*`. @default none */
  agentIds?: (() => readonly string[]) | undefined;
  /**
   * The approval rules on a server's request, checked like a tool call named
   * `mcp.<id>.sampling` or `mcp.<id>.elicitation` (an operator may be asked). Without it,
   * sampling runs as tools do with approvals off, and elicitation is not offered.
   */
  approve?:
    | ((check: {
        sessionKey: string;
        agentId: string;
        toolName: string;
        input: unknown;
        signal: AbortSignal;
      }) => Promise<McpApprovalVerdict>)
    | undefined;
  /** Runs one completion with the agent's own model (`sampling/createMessage`). */
  complete?: ((request: McpCompletionRequest) => Promise<McpCompletion>) | undefined;
}

/** The agent a server's request is made for: the turn calling one of its tools, if one agent is. */
export interface Asker {
  agentId: string;
  sessionKey: string;
  /** The turn's signal: a wait for the operator ends with the turn. */
  signal?: AbortSignal | undefined;
}

/** What the handlers need of the connection they serve. */
export interface RequestScope {
  id: string;
  entry: McpServerEntry;
  hooks: McpClientHooks;
  /** The agent whose tool calls are in flight, when exactly one agent's are. */
  asker(): Asker | undefined;
}

/** The capabilities agentd declares to a server, per the hooks it was given. */
export function clientCapabilities(hooks: McpClientHooks): ClientCapabilities {
  return {
    ...(hooks.workspaceOf ? { roots: {} } : {}),
    ...(hooks.complete ? { sampling: {} } : {}),
    ...(hooks.approve ? { elicitation: { form: {} } } : {}),
  };
}

/** An error answer of the JSON-RPC request (the SDK sends `code` and `message`). */
function rpcError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * Roots: during a tool call of one agent, that agent's workspace; otherwise the workspaces of
 * every agent the server serves (of every agent, for `*`).
 */
export function rootsOf(scope: RequestScope): ListRootsResult {
  const { hooks, entry } = scope;
  const asker = scope.asker();
  const agents = asker
    ? [asker.agentId]
    : entry.agents.includes('*')
      ? (hooks.agentIds?.() ?? [])
      : entry.agents;
  const roots = new Map<string, { uri: string; name: string }>();
  for (const agentId of agents) {
    const dir = hooks.workspaceOf?.(agentId);
    if (dir === undefined) continue;
    const uri = pathToFileURL(dir).href;
    if (!roots.has(uri)) roots.set(uri, { uri, name: `workspace of agent ${agentId}` });
  }
  return { roots: [...roots.values()] };
}

/** The request's signal, ended with the asking turn too. */
function bothSignals(asker: Asker, signal: AbortSignal): AbortSignal {
  return asker.signal ? AbortSignal.any([signal, asker.signal]) : signal;
}

/** The asker, else the one agent the server is configured for. */
function askerOrOnlyAgent(scope: RequestScope): Asker | undefined {
  const asker = scope.asker();
  if (asker) return asker;
  const [only, ...others] = scope.entry.agents;
  if (only !== undefined && only !== '*' && others.length === 0) {
    return { agentId: only, sessionKey: `default:mcp:${scope.id}` };
  }
  return undefined;
}

/** The text of a sampling message, refusing media (the agent's model is given text). */
function textOf(content: CreateMessageRequest['params']['messages'][number]['content']): string {
  const parts = Array.isArray(content) ? content : [content];
  return parts
    .map((part) => {
      if (part.type === 'text') return part.text;
      throw rpcError(-32602, `agentd samples text only; the request has ${part.type} content`);
    })
    .join('\n');
}

/**
 * `sampling/createMessage`: the agent whose tool call is in flight answers with its own
 * model, after the approval rules allow `mcp.<id>.sampling`. A refusal is error -1, as the
 * specification's "user rejected" example.
 */
export async function sample(
  scope: RequestScope,
  params: CreateMessageRequest['params'],
  signal: AbortSignal,
): Promise<CreateMessageResult> {
  const complete = scope.hooks.complete;
  const asker = askerOrOnlyAgent(scope);
  if (!complete || !asker) {
    throw rpcError(-32600, `MCP server ${scope.id} asked for sampling outside a tool call of one agent`);
  }
  if (params.tools !== undefined) throw rpcError(-32602, 'agentd does not offer tools to sampling');
  const messages = params.messages.map((message) => ({
    role: message.role,
    content: textOf(message.content),
  }));
  const approve = scope.hooks.approve;
  if (approve) {
    const verdict = await approve({
      agentId: asker.agentId,
      sessionKey: asker.sessionKey,
      toolName: `mcp.${scope.id}.sampling`,
      input: { systemPrompt: params.systemPrompt, messages, maxTokens: params.maxTokens },
      signal: bothSignals(asker, signal),
    });
    if (!verdict.allow) throw rpcError(-1, `Sampling request was not approved (${verdict.reason})`);
  }
  const answer = await complete({
    agentId: asker.agentId,
    ...(params.systemPrompt !== undefined ? { system: params.systemPrompt } : {}),
    messages,
    maxOutputTokens: params.maxTokens,
    signal: bothSignals(asker, signal),
  });
  return {
    role: 'assistant',
    content: { type: 'text', text: answer.text },
    model: answer.model,
    stopReason: STOP_REASONS[answer.finishReason] ?? answer.finishReason,
  };
}

/** Operator-less outcomes of a request: nobody chose (`cancel`), as opposed to a refusal (`decline`). */
const NO_CHOICE = new Set(['timeout', 'cancelled', 'shutdown', 'restart', 'unavailable']);

/**
 * `elicitation/create` (form mode) as an approval request to the operator
 * (`mcp.<id>.elicitation`, the message and requested schema shown digested): a person's
 * approval answers `accept` with the schema's defaults as content; a denial (the operator's
 * or a rule's) `decline`; nobody deciding (approvals off, an `auto` rule, timeout, the turn
 * ending) `cancel`. A form whose required fields have no default cannot be filled in through
 * an approval, so it is declined.
 */
export async function elicit(
  scope: RequestScope,
  params: ElicitRequest['params'],
  signal: AbortSignal,
): Promise<ElicitResult> {
  const approve = scope.hooks.approve;
  const asker = askerOrOnlyAgent(scope);
  if (!approve || !asker || params.mode === 'url') return { action: 'cancel' };
  const verdict = await approve({
    agentId: asker.agentId,
    sessionKey: asker.sessionKey,
    toolName: `mcp.${scope.id}.elicitation`,
    input: { message: params.message, requestedSchema: params.requestedSchema },
    signal: bothSignals(asker, signal),
  });
  if (!verdict.allow) return { action: NO_CHOICE.has(verdict.reason) ? 'cancel' : 'decline' };
  // Only a person's yes accepts: approvals off or an `auto` rule asked nobody.
  if (verdict.via !== 'approved' && verdict.via !== 'approval_cache') return { action: 'cancel' };
  const content: Record<string, string | number | boolean | string[]> = {};
  for (const [name, property] of Object.entries(params.requestedSchema.properties)) {
    const fallback = (property as { default?: unknown }).default;
    if (fallback !== undefined) content[name] = fallback as string | number | boolean | string[];
  }
  const missing = (params.requestedSchema.required ?? []).filter((name) => !(name in content));
  return missing.length > 0 ? { action: 'decline' } : { action: 'accept', content };
}

/** Installs the handlers of the declared capabilities on a client before it connects. */
export async function handleClientRequests(client: Client, scope: RequestScope): Promise<void> {
  const { ListRootsRequestSchema, CreateMessageRequestSchema, ElicitRequestSchema } = await import(
    '@modelcontextprotocol/sdk/types.js'
  );
  if (scope.hooks.workspaceOf) client.setRequestHandler(ListRootsRequestSchema, () => rootsOf(scope));
  if (scope.hooks.complete) {
    client.setRequestHandler(CreateMessageRequestSchema, (request, extra) =>
      sample(scope, request.params, extra.signal),
    );
  }
  if (scope.hooks.approve) {
    client.setRequestHandler(ElicitRequestSchema, (request, extra) =>
      elicit(scope, request.params, extra.signal),
    );
  }
}
