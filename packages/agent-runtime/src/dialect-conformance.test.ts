import { testDialects } from '@agentd/storage/testing';
import { describe, expect, it } from 'vitest';
import { recordingScript, startRuntime } from '../test/helpers.js';
import type { ModelRequest } from './provider.js';

// The statement paths whose SQL had to be written for both dialects (typed nulls, key prefixes,
// the unbounded history, the full-text search), run on libsql and, with the test server set,
// on PostgreSQL. The search ranks by bm25 on libsql and ts_rank_cd on PostgreSQL: the tests
// assert the top result where one is clearly best, and sets where results tie.
describe.each(testDialects())('agent-runtime statements on %s', (dialect) => {
  const start = (options: Parameters<typeof startRuntime>[0] = {}) => startRuntime(options, dialect);

  it('ranks the session whose messages say the words most often first, one hit per session', async () => {
    const t = await start({ offline: { script: () => ({ text: 'noted' }) } });
    await t.runtime.runTurn({ message: 'lighthouse lighthouse lighthouse keeper', sessionKey: 'a:best' });
    await t.runtime.runTurn({
      message: 'a lighthouse far away with many other words around',
      sessionKey: 'b:weak',
    });
    await t.runtime.runTurn({ message: 'the keeper of the lighthouse', sessionKey: 'a:second' });
    await t.runtime.runTurn({ message: 'lighthouse once more', sessionKey: 'a:second' });
    await t.runtime.runTurn({ message: 'nothing related', sessionKey: 'c:none' });

    const hits = await t.runtime.sessions.search('Lighthouse');
    expect(hits[0]).toMatchObject({ sessionKey: 'a:best', snippet: expect.stringContaining('[lighthouse]') });
    expect(hits.map((hit) => hit.sessionKey).sort()).toEqual(['a:best', 'a:second', 'b:weak']);
    expect(hits.every((hit) => hit.score > 0)).toBe(true);
    expect(hits.map((hit) => hit.score)).toEqual([...hits.map((hit) => hit.score)].sort((x, y) => y - x));

    // Every word is required; punctuation and case do not matter.
    expect(
      (await t.runtime.sessions.search('keeper, LIGHTHOUSE!')).map((hit) => hit.sessionKey).sort(),
    ).toEqual(['a:best', 'a:second']);
    expect(await t.runtime.sessions.search('lighthouse submarine')).toEqual([]);
    expect(await t.runtime.sessions.search('lighthouse', 1)).toHaveLength(1);
    // Only user and assistant messages are indexed: the assistant's answer is found.
    expect((await t.runtime.sessions.search('noted', 10)).length).toBe(4);
  });

  it('filters by key prefix literally, whatever the prefix holds', async () => {
    const t = await start();
    await t.runtime.runTurn({ message: 'tulips', sessionKey: 'team_1:rpc:x' });
    await t.runtime.runTurn({ message: 'tulips', sessionKey: 'teamA1:rpc:y' });
    await t.runtime.runTurn({ message: 'tulips', sessionKey: 'tëam%:rpc:z' });
    const keys = async (prefix: string) =>
      (await t.runtime.sessions.search('tulips', 10, { keyPrefix: prefix })).map((hit) => hit.sessionKey);
    expect(await keys('team_1:')).toEqual(['team_1:rpc:x']);
    expect(await keys('tëam%')).toEqual(['tëam%:rpc:z']);
    expect(await keys('nobody:')).toEqual([]);
    expect((await t.runtime.sessions.list({ keyPrefix: 'team_' })).map((row) => row.sessionKey)).toEqual([
      'team_1:rpc:x',
    ]);
    expect((await t.runtime.sessions.list({ keyPrefix: 'tëam%' })).map((row) => row.sessionKey)).toEqual([
      'tëam%:rpc:z',
    ]);
    expect(await t.runtime.sessions.list({ kind: 'cron' })).toEqual([]);
  });

  it('pages history newest-first by limit and time, and keeps one answer per turn key', async () => {
    const seen: ModelRequest[] = [];
    let clock = 1_764_000_000_000;
    const t = await start({ now: () => (clock += 1000), offline: { script: recordingScript(seen, 'same') } });
    for (const message of ['one', 'two', 'three']) await t.runtime.runTurn({ message, sessionKey: 'h' });
    const all = await t.runtime.sessions.history('h');
    expect(all.messages.map((message) => message.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    const tail = await t.runtime.sessions.history('h', { limit: 2 });
    expect(tail.messages.map((message) => message.seq)).toEqual([5, 6]);
    const before = await t.runtime.sessions.history('h', { beforeTs: all.messages[2]!.createdAt });
    expect(before.messages.map((message) => message.seq)).toEqual([1, 2]);

    const first = await t.runtime.runTurn({ message: 'once', sessionKey: 'k', turnKey: 'q:1' });
    const again = await t.runtime.runTurn({ message: 'once', sessionKey: 'k', turnKey: 'q:1' });
    expect(again.traceId).toBe(first.traceId);
    expect(seen).toHaveLength(4);
  });
});
