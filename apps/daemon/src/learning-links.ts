import { type AgentRuntime, agentCapabilityClass } from '@agentd/agent-runtime';
import type { AttemptOutcome, InboundReaction } from '@agentd/channels';
import type { AgentTurnRunner } from '@agentd/contracts';
import type { LearningService } from '@agentd/learning';
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

/** Finished channel turns remembered until their answer is delivered (the oldest forgotten first). */
const REACTION_LINKS = 5000;

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (!map.has(key) && map.size >= REACTION_LINKS) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
  map.set(key, value);
}

/**
 * Links a reaction on a channel message back to the turn that wrote it, so learning can read
 * it as that turn's outcome (source `reaction`). An inbound turn runs with turn key
 * `channel:<type>:<chat>:<message>` and its answer is queued as `reply:<type>:<chat>:<message>`:
 * the wrapped runner notes the turn's trace (in memory, for the seconds until delivery), the
 * delivery hands learning the platform id of the answer (kept in its database, so a reaction
 * after a restart still counts), and a reaction on that id settles the turn.
 */
export function channelReactions(learning: () => LearningService | undefined) {
  const turns = new Map<string, { sessionKey: string; traceId: string | undefined }>();
  return {
    /** The runner the channels run inbound turns through. */
    runner(inner: AgentTurnRunner): AgentTurnRunner {
      return {
        async runTurn(request) {
          const result = await inner.runTurn(request);
          if (request.turnKey?.startsWith('channel:')) {
            // The agent runtime's result carries the turn's trace id; another runner's may not.
            const traceId = (result as { traceId?: unknown }).traceId;
            remember(turns, request.turnKey.slice('channel:'.length), {
              sessionKey: result.sessionKey,
              traceId: typeof traceId === 'string' ? traceId : undefined,
            });
          }
          return result;
        },
      };
    },
    /** Every delivery attempt: a delivered answer of an inbound turn is recorded by its platform id. */
    onAttempt({ entry, outcome }: Pick<AttemptOutcome, 'entry' | 'outcome'>): void {
      if (outcome !== 'delivered' || !entry.messageId || !entry.idempotencyKey.startsWith('reply:')) return;
      const key = entry.idempotencyKey.slice('reply:'.length);
      const turn = turns.get(key);
      if (!turn) return;
      turns.delete(key);
      learning()?.noteAnswer({
        channelType: entry.channelType,
        channelId: entry.operation.channelId,
        messageId: entry.messageId,
        ...turn,
      });
    },
    /** A reaction of an admitted user: learning settles the turn if the message is one of its answers. */
    onReaction(reaction: InboundReaction): void {
      learning()?.noteReaction({
        answer: {
          channelType: reaction.channelType,
          channelId: reaction.channelId,
          messageId: reaction.messageId,
        },
        emoji: reaction.emoji,
      });
    },
  };
}
