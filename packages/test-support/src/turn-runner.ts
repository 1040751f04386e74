import type { AgentTurnRequest, AgentTurnRunner } from '@agentd/contracts';

/**
 * A fake agent for a service that runs turns: each request goes to `answer`, which records what
 * the test needs and answers the response text; the result counts one input and one output
 * token, finishes `stop` and carries the request's session key (else `sessionFallback`).
 */
export function turnRunner(
  answer: (request: AgentTurnRequest) => string | Promise<string>,
  sessionFallback = '',
): AgentTurnRunner {
  return {
    async runTurn(request) {
      return {
        response: await answer(request),
        tokensUsed: { input: 1, output: 1, total: 2 },
        finishReason: 'stop',
        sessionKey: request.sessionKey ?? sessionFallback,
      };
    },
  };
}
