import type { AgentTurnRunner } from '@agentd/contracts';
import { createEchoExecutor, createRunnerExecutor, type NodeExecutor } from '@agentd/graph-engine';

/** Where the graph executor of a daemon comes from, in order of precedence. */
export interface GraphExecutorSources {
  /** An executor given by an embedder or a test (`startDaemon({ graphExecutor })`). */
  executor?: NodeExecutor | undefined;
  /**
   * The daemon environment. `AGENTD_GRAPH_EXECUTOR=echo` selects the deterministic offline
   * executor (output = rendered prompt) after `AGENTD_GRAPH_ECHO_DELAY_MS` (default 0).
   */
  env: NodeJS.ProcessEnv;
  /** The agent runtime's turn runner, when the daemon has one. */
  runner?: AgentTurnRunner | undefined;
}

/**
 * Picks the executor graph nodes run on: an injected one, then the `echo` executor selected by
 * the environment, then the agent runtime. Undefined only when none is given (the daemon always
 * passes its runtime).
 *
 * @throws {Error} when `AGENTD_GRAPH_EXECUTOR` or `AGENTD_GRAPH_ECHO_DELAY_MS` holds an unknown value.
 */
export function resolveGraphExecutor(sources: GraphExecutorSources): NodeExecutor | undefined {
  if (sources.executor) return sources.executor;
  const selected = sources.env.AGENTD_GRAPH_EXECUTOR;
  if (selected !== undefined && selected !== '') {
    if (selected !== 'echo') {
      throw new Error(`AGENTD_GRAPH_EXECUTOR must be 'echo' or unset, got '${selected}'`);
    }
    const delayText = sources.env.AGENTD_GRAPH_ECHO_DELAY_MS ?? '0';
    const delayMs = Number(delayText);
    if (!Number.isInteger(delayMs) || delayMs < 0) {
      throw new Error(`AGENTD_GRAPH_ECHO_DELAY_MS must be a non-negative integer, got '${delayText}'`);
    }
    return createEchoExecutor({ delayMs });
  }
  return sources.runner ? createRunnerExecutor(sources.runner) : undefined;
}
