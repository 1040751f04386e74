import type { AgentDefinition } from './config.js';
import type { TurnRecallRecord } from '@agentd/evidence';
import type { AgentRuntimeLogger } from './logger.js';
import type { TurnRecall } from './runtime-options.js';
import { estimateTokens } from './tokens.js';

/**
 * Runs the agent's recall for the user message. A failure, a timeout or a cancelled turn
 * never fails the turn: it runs without memories and the evidence says why.
 */
export async function recallBeforeTurn(
  recall: TurnRecall,
  logger: AgentRuntimeLogger,
  turn: {
    agent: AgentDefinition;
    agentId: string;
    sessionKey: string;
    traceId: string;
    message: string;
    memoryTenant?: string | undefined;
    signal: AbortSignal;
  },
): Promise<{ context: string | undefined; evidence: TurnRecallRecord }> {
  const { agent, agentId, sessionKey, traceId, message, signal: turnSignal } = turn;
  const started = performance.now();
  const limitMs = agent.memory.recallTimeoutMs;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const failed = (errorKind: string): TurnRecallRecord => ({
    ok: false,
    lanes: [],
    finalCount: 0,
    ftsCandidates: 0,
    vectorCandidates: 0,
    reranked: false,
    rerankFellBack: false,
    degraded: false,
    injectedTokens: 0,
    durationMs: Math.round(performance.now() - started),
    errorKind,
  });
  try {
    const pending = recall.recall({
      agentId,
      sessionKey,
      message,
      ...(turn.memoryTenant !== undefined ? { tenant: turn.memoryTenant } : {}),
      signal: AbortSignal.any([turnSignal, controller.signal]),
    });
    // A recall abandoned at the time limit may still reject later; nobody waits for it then.
    pending.catch(() => undefined);
    const outcome = await Promise.race([
      pending,
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), limitMs);
      }),
    ]);
    if (outcome === 'timeout') {
      controller.abort();
      logger.warn(
        {
          agentId,
          traceId,
          timeoutMs: limitMs,
          hint: `memory recall took longer than memory.recallTimeoutMs (${limitMs} ms) of the agent; the turn ran without memories (check the embedder or raise the limit)`,
          errorKind: 'timeout',
        },
        'auto recall timed out',
      );
      return { context: undefined, evidence: failed('timeout') };
    }
    const { record } = outcome;
    return {
      context: outcome.context,
      evidence: {
        ok: true,
        lanes: [...record.lanes],
        finalCount: outcome.entries.length,
        ftsCandidates: record.ftsCandidates,
        vectorCandidates: record.vectorCandidates,
        reranked: record.reranked,
        rerankFellBack: record.rerankFellBack,
        degraded: record.degraded,
        injectedTokens: 0,
        durationMs: Math.round(performance.now() - started),
      },
    };
  } catch (error) {
    const cancelled = turnSignal.aborted;
    if (!cancelled) {
      logger.warn(
        {
          agentId,
          traceId,
          err: error,
          hint: 'memory recall failed, so the turn ran without memories; check the memory store and its embedder',
          errorKind: 'dependency',
        },
        'auto recall failed',
      );
    }
    return { context: undefined, evidence: failed(cancelled ? 'cancelled' : 'dependency') };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The recall block cut to `maxTokens`: whole memory lines from the most relevant down, under
 * the block's heading line; `undefined` when not even one memory fits.
 */
export function fitRecallBlock(
  block: string,
  maxTokens: number,
  count: (text: string) => number = estimateTokens,
): string | undefined {
  // Two characters for the blank line that separates the block from the rest of the system prompt.
  if (count(`\n\n${block}`) <= maxTokens) return block;
  const [heading = '', ...lines] = block.split('\n');
  const kept: string[] = [];
  for (const line of lines) {
    if (count(`\n\n${[heading, ...kept, line].join('\n')}`) > maxTokens) break;
    kept.push(line);
  }
  return kept.length > 0 ? [heading, ...kept].join('\n') : undefined;
}
