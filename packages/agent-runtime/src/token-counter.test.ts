import { describe, expect, it } from 'vitest';
import { estimatingCounter, openAiEncodingOf, tokenCounterFor } from './token-counter.js';
import { estimateTokens } from './tokens.js';

const SAMPLES = {
  chinese: '我们今天在会议上讨论了新产品的发布计划，以及市场营销策略和预算分配的问题。',
  japanese: '今日は会議で新製品の発売計画について話し合い、マーケティング戦略と予算配分を決めました。',
  korean: '오늘 회의에서 신제품 출시 계획과 마케팅 전략, 예산 배분에 대해 논의했습니다.',
};
const ENGLISH =
  'Today in the meeting we discussed the launch plan for the new product, the marketing strategy and the budget.';

describe('estimateTokens', () => {
  it('counts about a token per Chinese, Japanese or Korean character, not one per four', async () => {
    const cl100k = await tokenCounterFor('gpt-4-turbo');
    for (const [language, text] of Object.entries(SAMPLES)) {
      const real = cl100k.count(text);
      // characters/4 gave 10-11 for these, a third or a quarter of the real count.
      expect(estimateTokens(text), language).toBeGreaterThanOrEqual(Math.floor(real * 0.8));
      expect(estimateTokens(text), language).toBeLessThanOrEqual(Math.ceil(real * 1.5));
    }
  });

  it('keeps characters/4 for text without CJK, and counts a mixed text by its parts', () => {
    expect(estimateTokens(ENGLISH)).toBe(Math.ceil(ENGLISH.length / 4));
    expect(estimateTokens('abcd漢字')).toBe(3);
    expect(estimateTokens('')).toBe(0);
  });
});

describe('tokenCounterFor', () => {
  it('counts an OpenAI model family with its own encoding, CJK included', async () => {
    const o200k = await tokenCounterFor('openai/gpt-4o-mini');
    expect(o200k.counting).toBe('o200k_base');
    expect(o200k.count(SAMPLES.chinese)).toBe(22);
    expect(o200k.count(ENGLISH)).toBe(21);
    const cl100k = await tokenCounterFor('gpt-3.5-turbo');
    expect(cl100k.counting).toBe('cl100k_base');
    expect(cl100k.count(SAMPLES.chinese)).toBe(38);
    // Special-token text in a message is counted as plain text, never refused.
    expect(cl100k.count('<|endoftext|>')).toBeGreaterThan(1);
  });

  it('falls back to the estimate for families whose tokenizer is unknown', async () => {
    for (const model of ['claude-sonnet-4-5', 'llama3.1:8b', 'qwen2.5-coder', 'offline', 'gpt4all-local']) {
      expect(await tokenCounterFor(model), model).toBe(estimatingCounter);
    }
  });

  it('maps model names to encodings', () => {
    expect(openAiEncodingOf('o3-mini')).toBe('o200k_base');
    expect(openAiEncodingOf('gpt-5')).toBe('o200k_base');
    expect(openAiEncodingOf('gpt-4.1-nano')).toBe('o200k_base');
    expect(openAiEncodingOf('gpt-4-0613')).toBe('cl100k_base');
    expect(openAiEncodingOf('o3mini-clone')).toBeUndefined();
  });
});
