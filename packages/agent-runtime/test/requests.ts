import type { ModelRequest } from '../src/provider.js';

/**
 * A `chat` request of one user message and no tools, as the turn loop sends a provider; the
 * provider tests and the benchmark change what they need through `overrides`.
 */
export function chatRequest(content: string, overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'offline',
    system: 'system prompt',
    messages: [{ role: 'user', content }],
    tools: [],
    maxOutputTokens: 1024,
    signal: new AbortController().signal,
    purpose: 'chat',
    ...overrides,
  };
}
