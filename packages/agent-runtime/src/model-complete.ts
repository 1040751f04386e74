import type { AgentRegistry } from './agent-registry.js';
import { AgentRuntimeError } from './errors.js';
import type { ModelResolver } from './model-resolver.js';
import type { ModelFinishReason } from './provider.js';

/** One completion by an agent's model, outside any turn (an MCP server's sampling request). */
export interface CompletionRequest {
  agentId: string;
  /** The system prompt of the request (not the agent's). @default '' */
  system?: string | undefined;
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
  /** Capped by the model's own output limit. */
  maxOutputTokens: number;
  signal: AbortSignal;
}

/** The completion's text, the model that wrote it (`provider/model`) and why it stopped. */
export interface CompletionResult {
  text: string;
  model: string;
  finishReason: ModelFinishReason;
}

/**
 * Runs one model call with the agent's provider and model: no tools, no session, no memory,
 * nothing recorded. The agent must exist and not be suspended.
 */
export async function completeWithAgentModel(
  agents: AgentRegistry,
  models: ModelResolver,
  request: CompletionRequest,
): Promise<CompletionResult> {
  const agent = agents.find(request.agentId);
  if (!agent) {
    throw new AgentRuntimeError('AGENT_NOT_FOUND', `Agent not found: ${request.agentId}`, {
      data: { agentId: request.agentId },
    });
  }
  if (agent.suspended) throw agents.suspendedError(request.agentId);
  const resolved = models.resolve(agent, undefined);
  const provider = await models.provider(resolved);
  let text = '';
  let finishReason: ModelFinishReason = 'other';
  for await (const event of provider.stream({
    model: resolved.model,
    system: request.system ?? '',
    messages: request.messages,
    tools: [],
    maxOutputTokens: Math.max(1, Math.min(request.maxOutputTokens, resolved.maxOutputTokens)),
    signal: request.signal,
    purpose: 'chat',
  })) {
    if (event.type === 'text-delta') text += event.text;
    else if (event.type === 'finish') finishReason = event.finishReason;
  }
  return { text, model: `${resolved.providerId}/${resolved.model}`, finishReason };
}
