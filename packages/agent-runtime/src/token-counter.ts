import { estimateTokens } from './tokens.js';

/** How a {@link TokenCounter} counts: a BPE encoding of the model's family, or the estimate. */
export type TokenCounting = 'o200k_base' | 'cl100k_base' | 'estimate';

/** Counts the tokens of a text for one model. */
export interface TokenCounter {
  /** Which counting is used: the budget code records it, so a reader knows how exact it was. */
  readonly counting: TokenCounting;
  count(text: string): number;
}

/** The CJK-aware characters/4 estimate ({@link estimateTokens}): for models whose tokenizer is unknown. */
export const estimatingCounter: TokenCounter = { counting: 'estimate', count: estimateTokens };

/**
 * The encoding of an OpenAI model family, from the model name (a router prefix such as
 * `openai/` is ignored); `undefined` for every other family. Anthropic publishes no tokenizer
 * for its current models, and open-weight models (Llama, Qwen, Mistral, ...) each have their
 * own: those are estimated.
 */
export function openAiEncodingOf(model: string): Exclude<TokenCounting, 'estimate'> | undefined {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  if (/^(?:gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o[134](?:-|$)|gpt-oss)/.test(name)) return 'o200k_base';
  if (/^(?:gpt-4|gpt-3\.5|text-embedding-3|text-embedding-ada-002)/.test(name)) return 'cl100k_base';
  return undefined;
}

const loaded = new Map<Exclude<TokenCounting, 'estimate'>, Promise<TokenCounter>>();

/**
 * The token counter of `model`: the OpenAI family's BPE encoding (`js-tiktoken`) when the model
 * is one (see {@link openAiEncodingOf}), else {@link estimatingCounter}. The encoding's ranks
 * (a few MB) load on the first turn that needs them, never at start: a daemon that only runs
 * other models never holds them. A failed load falls back to the estimate.
 */
export function tokenCounterFor(model: string): Promise<TokenCounter> {
  const encoding = openAiEncodingOf(model);
  if (encoding === undefined) return Promise.resolve(estimatingCounter);
  let counter = loaded.get(encoding);
  if (!counter) {
    counter = loadEncoding(encoding).catch(() => {
      loaded.delete(encoding);
      return estimatingCounter;
    });
    loaded.set(encoding, counter);
  }
  return counter;
}

async function loadEncoding(encoding: Exclude<TokenCounting, 'estimate'>): Promise<TokenCounter> {
  const [{ Tiktoken }, ranks] = await Promise.all([
    import('js-tiktoken/lite'),
    encoding === 'o200k_base'
      ? import('js-tiktoken/ranks/o200k_base')
      : import('js-tiktoken/ranks/cl100k_base'),
  ]);
  const tokenizer = new Tiktoken(ranks.default);
  // Special-token text in a user's message is counted as plain text, as providers encode it.
  return { counting: encoding, count: (text) => tokenizer.encode(text, [], []).length };
}
