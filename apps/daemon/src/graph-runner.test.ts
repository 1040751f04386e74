import type { NodeRequest } from '@agentd/graph-engine';
import { describe, expect, it } from 'vitest';
import { type AgentTurnRunner, createRunnerExecutor, resolveGraphExecutor } from './graph-runner.js';

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

describe('resolveGraphExecutor', () => {
  it('prefers an injected executor, then the echo executor, then the runner', async () => {
    const injected = { run: async () => 'injected' };
    const { runner } = fakeRunner();
    expect(resolveGraphExecutor({ executor: injected, runner, env: { AGENTD_GRAPH_EXECUTOR: 'echo' } })).toBe(
      injected,
    );
    const echo = resolveGraphExecutor({ runner, env: { AGENTD_GRAPH_EXECUTOR: 'echo' } });
    expect(await echo?.run(request())).toBe('write a haiku');
    expect(await resolveGraphExecutor({ runner, env: {} })?.run(request())).toBe('answer to write a haiku');
    expect(resolveGraphExecutor({ env: {} })).toBeUndefined();
  });

  it('rejects unknown executor names and bad delays', () => {
    expect(() => resolveGraphExecutor({ env: { AGENTD_GRAPH_EXECUTOR: 'gpt' } })).toThrow(/'echo' or unset/);
    expect(() =>
      resolveGraphExecutor({ env: { AGENTD_GRAPH_EXECUTOR: 'echo', AGENTD_GRAPH_ECHO_DELAY_MS: '-5' } }),
    ).toThrow(/non-negative integer/);
  });
});
