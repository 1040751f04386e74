import type { ModelMessage, ModelToolSpec } from './provider.js';

/** Per-message framing overhead (role markers) counted on top of the text. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/**
 * Estimates the tokens of a text: one per four UTF-16 units, rounded up. Providers
 * tokenise differently; the estimate only has to be stable and a little pessimistic
 * for budgeting, and the billed figures come from the provider's usage report.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Estimated tokens of one message as sent, including tool calls and framing. */
export function estimateMessageTokens(message: ModelMessage): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS + estimateTokens(message.content);
  if (message.role === 'assistant' && message.toolCalls) {
    for (const call of message.toolCalls) {
      tokens +=
        MESSAGE_OVERHEAD_TOKENS + estimateTokens(call.toolName) + estimateTokens(JSON.stringify(call.input));
    }
  }
  return tokens;
}

/** Estimated tokens of the tool specs offered to a model. */
export function estimateToolTokens(tools: readonly ModelToolSpec[]): number {
  let tokens = 0;
  for (const tool of tools) {
    tokens +=
      MESSAGE_OVERHEAD_TOKENS +
      estimateTokens(tool.name + tool.description + JSON.stringify(tool.inputSchema));
  }
  return tokens;
}
