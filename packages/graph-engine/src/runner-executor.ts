import type { AgentTurnRunner } from '@agentd/contracts';
import type { NodeExecutor } from './execute.js';

/** Finish reasons that mean the turn produced no usable answer. */
const failedFinishReasons = new Set(['error', 'timeout', 'cancelled']);

/**
 * Runs each graph node as one agent turn: the rendered prompt is the message, the session is
 * `graph:<runId>:<nodeId>` (`<tenant>:graph:…` for a tenant's run; `session.list {kind: graph}`
 * finds it), and a turn that ends
 * in error, timeout or cancellation fails the attempt (the engine may retry it).
 */
export function createRunnerExecutor(runner: AgentTurnRunner): NodeExecutor {
  return {
    async run(request) {
      const result = await runner.runTurn({
        ...(request.agentId === undefined ? {} : { agentId: request.agentId }),
        message: request.prompt,
        // A tenant's run works in the tenant's session space and memory.
        sessionKey:
          request.tenant === undefined
            ? `graph:${request.runId}:${request.nodeId}`
            : `${request.tenant}:graph:${request.runId}:${request.nodeId}`,
        ...(request.tenant === undefined ? {} : { memoryTenant: request.tenant }),
        timeoutMs: request.timeoutMs,
        signal: request.signal,
        origin: 'graph',
      });
      if (failedFinishReasons.has(result.finishReason)) {
        throw new Error(`agent turn ended with finishReason '${result.finishReason}'`);
      }
      return result.response;
    },
  };
}
