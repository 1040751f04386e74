import type { NodeRequest } from './execute.js';
import { describe, expect, it } from 'vitest';
import type { AgentTurnRunner } from '@agentd/contracts';
import { createRunnerExecutor } from './runner-executor.js';

const request = (overrides: Partial<NodeRequest> = {}): NodeRequest => ({
  runId: 'r1',
  graphId: 'g1',
  nodeId: 'n1',
  agentId: 'writer',
  prompt: 'write a haiku',
  attempt: 1,
  timeoutMs: 1000,
  signal: new AbortController().signal,
  ...overrides,
});

function fakeRunner(finishReason = 'stop') {
  const turns: Array<Parameters<AgentTurnRunner['runTurn']>[0]> = [];
  const runner: AgentTurnRunner = {
    runTurn: async (turn) => {
      turns.push(turn);
      return {
        response: `answer to ${turn.message}`,
        tokensUsed: { input: 1, output: 2, total: 3 },
        finishReason,
        sessionKey: turn.sessionKey ?? '',
      };
    },
  };
  return { runner, turns };
}

describe('createRunnerExecutor', () => {
  it("runs a tenant's node in the tenant's session space and memory", async () => {
    const { runner, turns } = fakeRunner();
    await createRunnerExecutor(runner).run(request({ tenant: 'acme' }));
    expect(turns[0]).toMatchObject({ sessionKey: 'acme:graph:r1:n1', memoryTenant: 'acme' });
  });

  it('runs a node as one graph-origin agent turn in its own session', async () => {
    const { runner, turns } = fakeRunner();
    const signal = new AbortController().signal;
    expect(await createRunnerExecutor(runner).run(request({ signal }))).toBe('answer to write a haiku');
    expect(turns).toEqual([
      {
        agentId: 'writer',
        message: 'write a haiku',
        sessionKey: 'graph:r1:n1',
        timeoutMs: 1000,
        signal,
        origin: 'graph',
      },
    ]);
  });

  it('fails the attempt when the turn ends in error, timeout or cancellation', async () => {
    for (const reason of ['error', 'timeout', 'cancelled']) {
      await expect(createRunnerExecutor(fakeRunner(reason).runner).run(request())).rejects.toThrow(reason);
    }
    await expect(createRunnerExecutor(fakeRunner('length').runner).run(request())).resolves.toContain(
      'answer',
    );
  });
});
