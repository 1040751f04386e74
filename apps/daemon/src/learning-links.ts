import { type AgentRuntime, agentCapabilityClass } from '@agentd/agent-runtime';
import type { AgentdLogger } from '@agentd/logging';
import type { MemorySwitch } from '@agentd/memory-store';

/**
 * Whether an agent's model may synthesize learned procedures: not the offline provider (it
 * has no language model), not a `small` or `nano` capability class (it would write
 * procedures nobody should trust). The learning layer abstains for the others, and says so.
 */
export function canSynthesize(runtime: AgentRuntime, agentId: string): boolean {
  let providerId: string;
  try {
    providerId = runtime.agents.get(agentId).provider;
  } catch {
    return false;
  }
  const provider = runtime.models().providers.find((entry) => entry.id === providerId);
  if (!provider || provider.offline) return false;
  const capability = agentCapabilityClass(runtime, agentId);
  return capability !== 'small' && capability !== 'nano';
}

/**
 * How the memory lifecycle evicts a memory while memory is on: deleted from the store. A
 * memory already gone (deleted by hand) is not an error of the sweep; it is logged.
 */
export function memoryEvictor(
  memory: MemorySwitch,
  log: Pick<AgentdLogger, 'warn'>,
): ((memoryId: string) => Promise<void>) | undefined {
  const store = memory.current?.store;
  if (!store) return undefined;
  return async (memoryId) => {
    try {
      await store.delete(memoryId);
    } catch (error) {
      log.warn(
        { err: error, errorKind: 'dependency', hint: 'the memory may have been deleted already' },
        'evicted memory could not be deleted',
      );
    }
  };
}
