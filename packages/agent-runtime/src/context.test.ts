import { describe, expect, it } from 'vitest';
import { planBudget, resolveContextWindow, selectHistory } from './context.js';
import { formatSessionKey, parseSessionKey } from './session-key.js';

describe('planBudget', () => {
  /** A 1,000-token window wanting 300 output tokens and accepting no fewer than 100. */
  const plan = (systemTokens: number, freshTailTokens: number) =>
    planBudget({
      windowTokens: 1000,
      systemTokens,
      freshTailTokens,
      maxOutputTokens: 300,
      minOutputTokens: 100,
    });

  it('keeps the full output headroom when it fits and gives the rest to history', () => {
    expect(plan(100, 50)).toEqual({ verdict: 'fits', outputHeadroom: 300, historyBudget: 550 });
  });

  it('downshifts the output headroom, with no history, when the full limit does not fit', () => {
    expect(plan(600, 200)).toEqual({ verdict: 'downshifted', outputHeadroom: 200, historyBudget: 0 });
  });

  it('is exhausted when not even the minimum output fits', () => {
    expect(plan(900, 50)).toMatchObject({ verdict: 'exhausted', historyBudget: 0 });
  });
});

describe('resolveContextWindow', () => {
  it('caps small and nano providers and the agent pin, naming the source', () => {
    const base = {
      rawContextWindowTokens: 128_000,
      effectiveContextCapSmall: 32_768,
      effectiveContextCapNano: 8192,
    };
    expect(
      resolveContextWindow({ ...base, capabilityClass: 'frontier', agentMaxWindowTokens: undefined }),
    ).toEqual({
      windowTokens: 128_000,
      rawContextWindowTokens: 128_000,
      windowCapSource: 'none',
    });
    expect(
      resolveContextWindow({ ...base, capabilityClass: 'small', agentMaxWindowTokens: undefined })
        .windowCapSource,
    ).toBe('effectiveContextCapSmall');
    expect(
      resolveContextWindow({ ...base, capabilityClass: 'nano', agentMaxWindowTokens: undefined })
        .windowTokens,
    ).toBe(8192);
    expect(
      resolveContextWindow({ ...base, capabilityClass: 'nano', agentMaxWindowTokens: 4000 }),
    ).toMatchObject({
      windowTokens: 4000,
      windowCapSource: 'capabilityClass',
    });
  });
});

describe('selectHistory', () => {
  it('keeps the newest contiguous messages within budget, oldest first, without leading tool results', () => {
    const newestFirst = [
      { id: 5, role: 'assistant', tokens: 10 },
      { id: 4, role: 'tool', tokens: 10 },
      { id: 3, role: 'assistant', tokens: 10 },
      { id: 2, role: 'user', tokens: 50 },
      { id: 1, role: 'assistant', tokens: 1 },
    ];
    expect(selectHistory(newestFirst, 25)).toEqual({ kept: [newestFirst[0]], tokens: 10 });
    const { kept, tokens } = selectHistory(newestFirst, 35);
    expect(kept.map((message) => message.id)).toEqual([3, 4, 5]);
    expect(tokens).toBe(30);
  });
});

describe('formatSessionKey', () => {
  it('joins tenant, channel and user, escaping colons and percent signs, and parses back', () => {
    const key = formatSessionKey({ tenantId: 'acme', userId: 'a:b%c', channelId: 'web' });
    expect(key).toBe('acme:web:a%3Ab%25c');
    expect(parseSessionKey(key)).toEqual({ tenantId: 'acme', channelId: 'web', userId: 'a:b%c' });
    expect(parseSessionKey('just-one')).toBeUndefined();
  });
});
