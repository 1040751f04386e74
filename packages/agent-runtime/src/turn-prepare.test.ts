import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '@agentd/storage';
import { afterEach, describe, expect, it } from 'vitest';
import { addTool } from '../test/helpers.js';
import { createAgentRegistry } from './agent-registry.js';
import type { TurnSetup } from './internal/turn-state.js';
import { createModelResolver } from './model-resolver.js';
import { createRuntimeContext } from './runtime-context.js';
import { resolveRuntimeOptions } from './runtime-options.js';
import type { SessionRecord } from './session-store.js';
import { estimateTokens, estimateToolTokens } from './tokens.js';
import { createToolRunner } from './tool-runner.js';
import { prepareTurn } from './turn-prepare.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function setup(session?: Partial<SessionRecord>) {
  const dir = mkdtempSync(join(tmpdir(), 'agentd-prepare-'));
  dirs.push(dir);
  const ctx = createRuntimeContext(
    resolveRuntimeOptions({
      db: {} as Database,
      dataDir: dir,
      tools: [addTool],
      agents: { entries: { calc: { name: 'Calc', systemPrompt: 'Add things.', tools: ['add'] } } },
    }),
  );
  const models = createModelResolver(ctx);
  const agent = createAgentRegistry(ctx, models).require('calc');
  const resolved = models.resolve(agent, undefined);
  const turn: TurnSetup = {
    request: { message: 'what is 1 + 1?' },
    input: { message: 'what is 1 + 1?' },
    sessionKey: 'p',
    session: session as SessionRecord | undefined,
    agentId: 'calc',
    agent,
    resolved,
    provider: await models.provider(resolved),
    traceId: 'trace-p',
    origin: 'rpc',
    startedAt: 1000,
  };
  return { ctx, tools: createToolRunner(ctx), turn };
}

describe('prepareTurn', () => {
  it('lists the agent’s skills in the prompt only when it is offered the read tool', async () => {
    const { ctx, tools, turn } = await setup();
    const asked: string[] = [];
    const promptBlock = async (agentId: string) => {
      asked.push(agentId);
      return 'Skills you can load:\n- pdf: fills forms';
    };
    ctx.settings.skills = { readTool: 'add', promptBlock };
    const state = await prepareTurn(ctx, tools, turn, new AbortController().signal);
    expect(state.system).toBe('Add things.\n\nSkills you can load:\n- pdf: fills forms');
    expect(asked).toEqual(['calc']);
    ctx.settings.skills = { readTool: 'skill_read', promptBlock };
    expect((await prepareTurn(ctx, tools, turn, new AbortController().signal)).system).toBe('Add things.');
    expect(asked).toEqual(['calc']);
  });

  it('assembles the system prompt, the offered tools and the fresh tail of a new session', async () => {
    const { ctx, tools, turn } = await setup();
    const state = await prepareTurn(ctx, tools, turn, new AbortController().signal);
    expect(state.system).toBe('Add things.');
    expect(state.offered.map((tool) => tool.name)).toEqual(['add']);
    expect(state.systemTokens).toBe(estimateTokens('Add things.') + estimateToolTokens(state.offered));
    expect(state.tail).toEqual([{ role: 'user', content: 'what is 1 + 1?' }]);
    expect(state.turnMessages).toHaveLength(1);
    expect(state.history).toEqual([]);
    expect(state.cached).toBeUndefined();
    expect(state.window.windowTokens).toBe(8192);
    expect(state.maxOutputTokens).toBe(1024);
    expect(state.trajectory).toEqual([
      {
        v: 1,
        sessionKey: 'p',
        traceId: 'trace-p',
        agentId: 'calc',
        ts: 1000,
        type: 'turn_start',
        origin: 'rpc',
        provider: 'offline',
        model: 'offline',
      },
    ]);
  });

  it('adds the summary of a compacted session and reads its history from the cached tail', async () => {
    const { ctx, tools, turn } = await setup({
      sessionKey: 'p',
      nextSeq: 3,
      compactedBeforeSeq: 1,
      summary: 'Ann likes sums.',
      summaryTokens: 5,
    });
    ctx.cache.set('p', {
      session: turn.session as SessionRecord,
      messages: [
        { role: 'user', content: 'hello', tokens: 3, seq: 1, createdAt: 1, traceId: 'x' },
        { role: 'assistant', content: 'hi', tokens: 2, seq: 2, createdAt: 1, traceId: 'x' },
      ],
      fromSeq: 1,
    });
    const state = await prepareTurn(ctx, tools, turn, new AbortController().signal);
    expect(state.system).toBe('Add things.\n\nSummary of the earlier conversation:\nAnn likes sums.');
    expect(state.history.map((message) => message.content)).toEqual(['hello', 'hi']);
    expect(state.historyTokens).toBe(5);
    expect(state.cached?.fromSeq).toBe(1);
  });
});
