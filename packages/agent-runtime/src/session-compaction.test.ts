import { describe, expect, it } from 'vitest';
import { recordingScript, startRuntime } from '../test/helpers.js';
import type { ModelRequest } from './provider.js';

describe('AgentRuntime.sessions', () => {
  it('compacts old history into a summary that replaces it in later context', async () => {
    const seen: ModelRequest[] = [];
    const replies = (request: ModelRequest) =>
      request.purpose === 'compaction' ? undefined : { text: `reply ${seen.length}` };
    const t = await startRuntime({ offline: { script: recordingScript(seen, replies) } });
    for (const word of ['alpha', 'beta', 'gamma', 'delta'])
      await t.runtime.runTurn({ message: word, sessionKey: 'cp' });
    const result = await t.runtime.sessions.compact('cp');
    expect(result).toMatchObject({
      sessionKey: 'cp',
      compacted: true,
      messagesSummarized: 4,
      keptMessages: 4,
    });
    expect(result.tokensUsed.total).toBeGreaterThan(0);
    const compaction = seen.find((request) => request.purpose === 'compaction');
    expect(compaction?.messages[0]?.content).toContain('alpha');
    expect(compaction?.messages[0]?.content).not.toContain('gamma');

    await t.runtime.runTurn({ message: 'epsilon', sessionKey: 'cp' });
    const next = seen.at(-1);
    expect(next?.system).toContain('Summary of the earlier conversation');
    expect(next?.system).toContain('alpha');
    expect(
      next?.messages.map((message) => message.content).filter((text) => ['alpha', 'beta'].includes(text)),
    ).toEqual([]);
    expect(next?.messages[0]).toEqual({ role: 'user', content: 'gamma' });
    // The raw history still holds every message; the export names the summary.
    expect((await t.runtime.sessions.history('cp')).messages).toHaveLength(10);
    expect((await t.runtime.sessions.export('cp')).metadata.summary).toContain('Summary');
    expect((await t.runtime.billing.bySession('cp')).callCount).toBe(6);

    const small = await t.runtime.sessions.compact('cp');
    expect(small.compacted).toBe(true);
    await t.runtime.runTurn({ message: 'one', sessionKey: 'tiny' });
    expect(await t.runtime.sessions.compact('tiny')).toMatchObject({
      compacted: false,
      reason: 'too little history to compact',
    });
  });
});
