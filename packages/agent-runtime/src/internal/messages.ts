import type { ModelMessage } from '../provider.js';
import type { NewMessage, SessionMessage } from '../session-store.js';

/** The model's view of a stored (or about to be stored) message. */
export function toModelMessage(message: NewMessage | SessionMessage): ModelMessage {
  if (message.role === 'user') return { role: 'user', content: message.content };
  if (message.role === 'assistant') {
    return message.toolCalls && message.toolCalls.length > 0
      ? { role: 'assistant', content: message.content, toolCalls: message.toolCalls }
      : { role: 'assistant', content: message.content };
  }
  return {
    role: 'tool',
    toolCallId: message.toolCallId ?? '',
    toolName: message.toolName ?? '',
    content: message.content,
    ...(message.isError ? { isError: true } : {}),
  };
}
