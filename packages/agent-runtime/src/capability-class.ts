import type { CapabilityClass } from './config.js';

/** The parts of an agent runtime {@link agentCapabilityClass} reads (`AgentRuntime` satisfies it). */
export interface CapabilityClassSource {
  agents: { get(agentId: string): { provider: string; model?: string | undefined } };
  models(): {
    providers: Array<{ id: string; capabilityClass?: string; models: Array<{ model: string }> }>;
    models: Array<{ provider: string; model: string; capabilityClass?: string }>;
  };
}

const capabilityClasses = new Set<string>(['frontier', 'mid', 'small', 'nano']);

/**
 * The capability class of an agent's model, or else of its provider; `unknown` when the agent
 * does not exist or neither names a class. The agent's model defaults to its provider's first.
 */
export function agentCapabilityClass(
  runtime: CapabilityClassSource,
  agentId: string,
): CapabilityClass | 'unknown' {
  let agent: { provider: string; model?: string | undefined };
  try {
    agent = runtime.agents.get(agentId);
  } catch {
    return 'unknown';
  }
  const { providers, models } = runtime.models();
  const provider = providers.find((entry) => entry.id === agent.provider);
  const wanted = agent.model ?? provider?.models[0]?.model;
  const model = models.find((entry) => entry.provider === agent.provider && entry.model === wanted);
  const found = model?.capabilityClass ?? provider?.capabilityClass;
  return found !== undefined && capabilityClasses.has(found) ? (found as CapabilityClass) : 'unknown';
}
