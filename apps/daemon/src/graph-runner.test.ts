import type { AgentTurnRunner } from '@agentd/contracts';
import type { NodeRequest } from '@agentd/graph-engine';
import { describe, expect, it } from 'vitest';
import { resolveGraphExecutor } from './graph-runner.js';

/** One node of run r1 whose rendered prompt is `write a haiku`. */
const request = {
  runId: 'r1',
  graphId: 'g1',
  nodeId: 'n1',
  agentId: 'writer',
  prompt: 'write a haiku',
} as NodeRequest;

/** Answers every turn with `answer to <message>`. */
const runner: AgentTurnRunner = {
  runTurn: async (turn) => ({
    response: `answer to ${turn.message}`,
    tokensUsed: { input: 1, output: 2, total: 3 },
    finishReason: 'stop',
    sessionKey: turn.sessionKey ?? '',
  }),
};

describe('resolveGraphExecutor', () => {
  it('prefers an injected executor, then the echo executor, then the runner', async () => {
    const injected = { run: async () => 'injected' };
    expect(resolveGraphExecutor({ executor: injected, runner, env: { AGENTD_GRAPH_EXECUTOR: 'echo' } })).toBe(
      injected,
    );
    const echo = resolveGraphExecutor({ runner, env: { AGENTD_GRAPH_EXECUTOR: 'echo' } });
    expect(await echo?.run(request)).toBe('write a haiku');
    expect(await resolveGraphExecutor({ runner, env: {} })?.run(request)).toBe('answer to write a haiku');
    expect(resolveGraphExecutor({ env: {} })).toBeUndefined();
  });

  it('rejects unknown executor names and bad delays', () => {
    expect(() => resolveGraphExecutor({ env: { AGENTD_GRAPH_EXECUTOR: 'gpt' } })).toThrow(/'echo' or unset/);
    expect(() =>
      resolveGraphExecutor({ env: { AGENTD_GRAPH_EXECUTOR: 'echo', AGENTD_GRAPH_ECHO_DELAY_MS: '-5' } }),
    ).toThrow(/non-negative integer/);
  });
});
