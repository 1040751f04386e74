import type { ModelMessage, ModelToolSpec } from './provider.js';

/** Per-message framing overhead (role markers) counted on top of the text. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/** Han, kana, Hangul and the CJK punctuation and full-width forms: about a token each, not a quarter. */
const CJK =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff00-\uffef]/gu;
/** Hangul syllables: the cl100k encoding spends one to two tokens on each. */
const HANGUL = /\p{Script=Hangul}/u;
/** Below U+2E80 no character is CJK: the common case skips the scan. */
const MAYBE_CJK = /[\u2e80-\uffff]/;

/**
 * Estimates the tokens of a text without a tokenizer: one per Han or kana character, one and a
 * half per Hangul syllable, one per four UTF-16 units of everything else, rounded up. The BPE
 * tokenizers spend about four characters of English or code per token but about a token per
 * Chinese, Japanese or Korean character (cl100k: 1.0-1.1 for Han and kana, up to 1.5 for
 * Hangul; o200k: 0.5-0.75), so a flat characters/4 undercounts those texts three to four times.
 * The estimate is the fallback of {@link TokenCounter} for models whose tokenizer agentd does
 * not know, and it errs high; billed figures come from the provider's usage report.
 */
export function estimateTokens(text: string): number {
  if (!MAYBE_CJK.test(text)) return Math.ceil(text.length / 4);
  let cjk = 0;
  let cjkUnits = 0;
  for (const [character] of text.matchAll(CJK)) {
    cjk += HANGUL.test(character) ? 1.5 : 1;
    cjkUnits += character.length;
  }
  return Math.ceil(cjk + (text.length - cjkUnits) / 4);
}

/**
 * Tokens of one message as sent, including tool calls and framing; `count` is the model's
 * tokenizer when known ({@link TokenCounter}), else the estimate.
 */
export function estimateMessageTokens(
  message: ModelMessage,
  count: (text: string) => number = estimateTokens,
): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS + count(message.content);
  if (message.role === 'assistant' && message.toolCalls) {
    for (const call of message.toolCalls) {
      tokens += MESSAGE_OVERHEAD_TOKENS + count(call.toolName) + count(JSON.stringify(call.input));
    }
  }
  return tokens;
}

/** Tokens of the tool specs offered to a model; `count` as for {@link estimateMessageTokens}. */
export function estimateToolTokens(
  tools: readonly ModelToolSpec[],
  count: (text: string) => number = estimateTokens,
): number {
  let tokens = 0;
  for (const tool of tools) {
    tokens +=
      MESSAGE_OVERHEAD_TOKENS + count(tool.name + tool.description + JSON.stringify(tool.inputSchema));
  }
  return tokens;
}
