import { describe, expect, it } from 'vitest';
import {
  contextProbe,
  readSessionIndex,
  readTrajectory,
  recordingLogger,
  recordingScript,
  startRuntime,
} from '../test/helpers.js';
import type { ModelRequest } from './provider.js';

describe('createAgentRuntime recall', () => {
  const recalledRecord = {
    lanes: ['fts', 'vector'] as Array<'fts' | 'vector'>,
    ftsCandidates: 3,
    vectorCandidates: 2,
    reranked: false,
    rerankFellBack: false,
    degraded: false,
  };
  const recallAgents = (memory: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    entries: { mem: { name: 'Mem', systemPrompt: 'Be brief.', memory, ...extra } },
  });

  it("recalls from the turn's memory tenant and hands it to tools, so a tenant-bound caller stays in its own memory", async () => {
    const asked: Array<Record<string, unknown>> = [];
    const probe = contextProbe('note', 'records its context', (context) => context.memoryTenant);
    const t = await startRuntime({
      agents: recallAgents({ autoRecall: true }, { tools: ['note'] }),
      // A tool that keeps within the turn's tenant: the tenant gate lets it run in acme's turn.
      tools: [{ ...probe.tool, tenantScoped: true }],
      offline: probe.offline,
      recall: {
        recall: async (request) => {
          asked.push({ ...request });
          return { context: undefined, entries: [], record: recalledRecord };
        },
      },
    });
    await t.runtime.runTurn({
      agentId: 'mem',
      message: 'hi',
      sessionKey: 'acme:chat:a',
      memoryTenant: 'acme',
    });
    await t.runtime.runTurn({ agentId: 'mem', message: 'hi', sessionKey: 'default:chat:b' });
    expect(asked.map((request) => request.tenant)).toEqual(['acme', undefined]);
    expect(probe.seen).toEqual(['acme', undefined]);
  });

  it('puts the recalled memories into the system side of the context and records counts and lanes', async () => {
    const seen: ModelRequest[] = [];
    const asked: Array<Record<string, unknown>> = [];
    const block = 'Relevant memories (most relevant first):\n- the user keeps a kiwi named Pip';
    const t = await startRuntime({
      agents: recallAgents({ autoRecall: true }),
      offline: { script: recordingScript(seen) },
      recall: {
        recall: async (request) => {
          asked.push({ ...request });
          return { context: block, entries: [{ id: 'mem_1' }], record: recalledRecord };
        },
      },
    });
    await t.runtime.runTurn({ agentId: 'mem', message: 'what is my bird called?', sessionKey: 'r1' });
    expect(asked).toEqual([
      {
        agentId: 'mem',
        sessionKey: 'r1',
        message: 'what is my bird called?',
        signal: expect.any(AbortSignal),
      },
    ]);
    expect(seen[0]?.system).toBe(`Be brief.\n\n${block}`);
    expect(seen[0]?.messages).toEqual([{ role: 'user', content: 'what is my bird called?' }]);

    const [row] = readSessionIndex(t.dir);
    expect(row?.recall).toEqual({
      ok: true,
      lanes: ['fts', 'vector'],
      finalCount: 1,
      ftsCandidates: 3,
      vectorCandidates: 2,
      reranked: false,
      rerankFellBack: false,
      degraded: false,
      injectedTokens: expect.any(Number),
      durationMs: expect.any(Number),
    });
    const budget = readTrajectory(t.dir, 'r1').find((record) => record.type === 'context_budget');
    expect(budget?.type === 'context_budget' && budget.budget.recallTokens).toBe(row?.recall?.injectedTokens);
    expect(row?.recall?.injectedTokens).toBeGreaterThan(block.length / 4 - 1);
    // The memories count as system tokens, so the budget figures add up to what was sent.
    expect(budget?.type === 'context_budget' && budget.budget.systemTokens).toBe(
      Math.ceil(`Be brief.\n\n${block}`.length / 4),
    );
  });

  it('does not recall for agents that leave memory.autoRecall off', async () => {
    let calls = 0;
    const t = await startRuntime({
      agents: recallAgents({ autoRecall: false }),
      recall: {
        recall: async () => {
          calls++;
          return { context: 'Relevant memories:\n- x', entries: [{}], record: recalledRecord };
        },
      },
    });
    await t.runtime.runTurn({ agentId: 'mem', message: 'hello', sessionKey: 'r2' });
    await t.runtime.runTurn({ message: 'hello', sessionKey: 'r3' });
    expect(calls).toBe(0);
    expect(readSessionIndex(t.dir).map((row) => row.recall)).toEqual([undefined, undefined]);
    expect(t.runtime.agents.get('mem').memory).toEqual({ autoRecall: false, recallTimeoutMs: 2000 });
  });

  it('keeps only the memory lines that fit the room history would get', async () => {
    const seen: ModelRequest[] = [];
    const first = `- ${'a'.repeat(398)}`;
    const second = `- ${'b'.repeat(398)}`;
    const t = await startRuntime({
      // 1200-token window, 1024 output: about 160 tokens are left after prompt and message.
      agents: recallAgents({ autoRecall: true }, { contextBudget: { maxWindowTokens: 1200 } }),
      offline: { script: recordingScript(seen) },
      recall: {
        recall: async () => ({
          context: `Relevant memories (most relevant first):\n${first}\n${second}`,
          entries: [{}, {}],
          record: recalledRecord,
        }),
      },
    });
    const result = await t.runtime.runTurn({ agentId: 'mem', message: 'hi', sessionKey: 'r4' });
    expect(result.endReason).toBe('completed');
    expect(seen[0]?.system).toContain(first);
    expect(seen[0]?.system).not.toContain(second);
    const budget = readTrajectory(t.dir, 'r4').find((record) => record.type === 'context_budget');
    expect(budget?.type === 'context_budget' && budget.budget.verdict).toBe('fits');
    const [row] = readSessionIndex(t.dir);
    expect(row?.recall?.finalCount).toBe(2);
    expect(row?.recall?.injectedTokens).toBeGreaterThan(100);
    expect(row?.recall?.injectedTokens).toBeLessThan(200);
  });

  it('runs the turn without memories and logs a warn when recall fails', async () => {
    const logger = recordingLogger();
    const seen: ModelRequest[] = [];
    const t = await startRuntime({
      agents: recallAgents({ autoRecall: true }),
      logger,
      offline: { script: recordingScript(seen, 'fine') },
      recall: {
        recall: async () => {
          throw new Error('embedder unreachable');
        },
      },
    });
    const result = await t.runtime.runTurn({ agentId: 'mem', message: 'hello', sessionKey: 'r5' });
    expect(result).toMatchObject({ response: 'fine', endReason: 'completed' });
    expect(seen[0]?.system).toBe('Be brief.');
    const warn = logger.entries.find((entry) => entry.message === 'auto recall failed');
    expect(warn?.level).toBe('warn');
    expect(warn?.fields).toMatchObject({ agentId: 'mem', errorKind: 'dependency', hint: expect.any(String) });
    const [row] = readSessionIndex(t.dir);
    expect(row?.recall).toMatchObject({
      ok: false,
      errorKind: 'dependency',
      finalCount: 0,
      injectedTokens: 0,
    });
    expect(row?.outcome.degraded).toBe(false);
  });

  it('abandons a recall slower than memory.recallTimeoutMs and aborts its signal', async () => {
    const logger = recordingLogger();
    let signal: AbortSignal | undefined;
    const t = await startRuntime({
      agents: recallAgents({ autoRecall: true, recallTimeoutMs: 50 }),
      logger,
      recall: {
        recall: (request) => {
          signal = request.signal;
          return new Promise((_, reject) => {
            request.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
          });
        },
      },
    });
    const result = await t.runtime.runTurn({ agentId: 'mem', message: 'hello', sessionKey: 'r6' });
    expect(result.endReason).toBe('completed');
    expect(signal?.aborted).toBe(true);
    const warn = logger.entries.find((entry) => entry.message === 'auto recall timed out');
    expect(warn?.fields).toMatchObject({
      errorKind: 'timeout',
      hint: expect.stringContaining('recallTimeoutMs'),
    });
    expect(readSessionIndex(t.dir)[0]?.recall).toMatchObject({ ok: false, errorKind: 'timeout' });
  });

  it('forgets the session recall state on session reset and delete', async () => {
    const forgotten: string[] = [];
    const t = await startRuntime({
      agents: recallAgents({ autoRecall: true }),
      recall: {
        recall: async () => ({
          context: undefined,
          entries: [],
          record: { ...recalledRecord, lanes: ['fts'] },
        }),
        forget: (sessionKey) => forgotten.push(sessionKey),
      },
    });
    await t.runtime.runTurn({ agentId: 'mem', message: 'hello', sessionKey: 'r7' });
    expect(readSessionIndex(t.dir)[0]?.recall).toMatchObject({ ok: true, lanes: ['fts'], finalCount: 0 });
    await t.runtime.sessions.reset('r7');
    await t.runtime.sessions.delete('r7');
    expect(forgotten).toEqual(['r7', 'r7']);
  });
});
