import { describe, expect, it } from 'vitest';
import { chatRequest } from '../test/requests.js';
import { createOfflineProvider } from './offline-provider.js';
import type { ModelStreamEvent } from './provider.js';

async function collect(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('createOfflineProvider', () => {
  it('answers deterministically, says it is offline, streams word by word and reports usage', async () => {
    const provider = createOfflineProvider();
    const first = await collect(provider.stream(chatRequest('what is the weather?')));
    const second = await collect(provider.stream(chatRequest('what is the weather?')));
    expect(second).toEqual(first);
    const text = first.map((event) => (event.type === 'text-delta' ? event.text : '')).join('');
    expect(text).toMatch(/^\[offline\] This reply comes from the offline provider/);
    expect(text).toContain('what is the weather?');
    expect(first.filter((event) => event.type === 'text-delta').length).toBeGreaterThan(10);
    const finish = first.at(-1);
    expect(finish).toMatchObject({ type: 'finish', finishReason: 'stop' });
    if (finish?.type !== 'finish') throw new Error('no finish');
    expect(finish.usage.inputTokens).toBe(Math.ceil('system prompt'.length / 4) + 4 + Math.ceil(20 / 4));
    expect(finish.usage.outputTokens).toBe(Math.ceil(text.length / 4));
  });

  it('calls a tool for a /tool directive and reports the result afterwards', async () => {
    const provider = createOfflineProvider();
    const call = await collect(provider.stream(chatRequest('/tool memory_search {"query":"cats"}')));
    expect(call).toEqual([
      {
        type: 'tool-call',
        toolCallId: expect.stringMatching(/^offline_/),
        toolName: 'memory_search',
        input: { query: 'cats' },
      },
      expect.objectContaining({ type: 'finish', finishReason: 'tool_calls' }),
    ]);
    const after = await collect(
      provider.stream(
        chatRequest('', {
          messages: [
            { role: 'user', content: '/tool memory_search {"query":"cats"}' },
            {
              role: 'assistant',
              content: '',
              toolCalls: [{ toolCallId: 'c1', toolName: 'memory_search', input: {} }],
            },
            { role: 'tool', toolCallId: 'c1', toolName: 'memory_search', content: '{"hits":2}' },
          ],
        }),
      ),
    );
    expect(after[0]).toEqual({ type: 'text-delta', text: '[offline] ' });
    const text = after.map((event) => (event.type === 'text-delta' ? event.text : '')).join('');
    expect(text).toBe('[offline] Tool memory_search returned: {"hits":2}');
  });

  it('cuts the reply at maxOutputTokens and finishes with length', async () => {
    const provider = createOfflineProvider({ script: () => ({ text: 'x'.repeat(100) }) });
    const events = await collect(provider.stream(chatRequest('hi', { maxOutputTokens: 5 })));
    const text = events.map((event) => (event.type === 'text-delta' ? event.text : '')).join('');
    expect(text).toBe('x'.repeat(20));
    expect(events.at(-1)).toMatchObject({ finishReason: 'length' });
  });

  it('stops when the signal aborts', async () => {
    const provider = createOfflineProvider({ chunkDelayMs: 20 });
    const controller = new AbortController();
    const events: ModelStreamEvent[] = [];
    const run = (async () => {
      for await (const event of provider.stream(
        chatRequest('a long enough message', { signal: controller.signal }),
      )) {
        events.push(event);
        if (events.length === 2) controller.abort();
      }
    })();
    await expect(run).rejects.toBeDefined();
    expect(events).toHaveLength(2);
  });
});
