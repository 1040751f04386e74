import { describe, expect, it } from 'vitest';
import { recordingScript, startRuntime } from '../test/helpers.js';
import { createAnthropicProvider } from './ai-sdk-provider.js';
import { isAgentRuntimeError } from './errors.js';
import { createOfflineProvider } from './offline-provider.js';
import type { ModelRequest } from './provider.js';

const weather = {
  name: 'get_weather',
  description: 'The weather of a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('client tools and call options', () => {
  it('offers client tools, ends the turn on a client call and continues it with the result', async () => {
    const seen: ModelRequest[] = [];
    const t = await startRuntime({
      offline: {
        script: recordingScript(seen, (request) => {
          const last = request.messages.at(-1);
          return last?.role === 'tool'
            ? { text: `It is ${last.content}.` }
            : { toolCalls: [{ toolName: 'get_weather', input: { city: 'Oslo' }, toolCallId: 'call_1' }] };
        }),
      },
    });
    const first = await t.runtime.runTurn({
      message: 'weather in Oslo?',
      sessionKey: 'default:openai:c1',
      clientTools: [weather],
      callOptions: { temperature: 0.2, topP: 0.9, seed: 7, stopSequences: ['END'], maxOutputTokens: 50 },
    });
    expect(first.finishReason).toBe('tool_calls');
    expect(first.clientToolCalls).toEqual([
      { toolCallId: 'call_1', toolName: 'get_weather', input: { city: 'Oslo' } },
    ]);
    expect(seen[0]?.tools.map((tool) => tool.name)).toContain('get_weather');
    expect(seen[0]?.options).toEqual({ temperature: 0.2, topP: 0.9, seed: 7, stopSequences: ['END'] });
    expect(seen[0]?.maxOutputTokens).toBe(50);

    const second = await t.runtime.runTurn({
      message: '',
      sessionKey: 'default:openai:c1',
      clientTools: [weather],
      toolResults: [{ toolCallId: 'call_1', content: 'sunny' }],
    });
    expect(second.finishReason).toBe('stop');
    expect(second.response).toBe('It is sunny.');
    expect(seen[1]?.messages.slice(-3)).toEqual([
      { role: 'user', content: 'weather in Oslo?' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ toolCallId: 'call_1', toolName: 'get_weather', input: { city: 'Oslo' } }],
      },
      { role: 'tool', toolCallId: 'call_1', toolName: 'get_weather', content: 'sunny' },
    ]);
  });

  it('answers a dangling client call for the model when the caller moves on, and refuses a stray result', async () => {
    const seen: ModelRequest[] = [];
    let call = 0;
    const t = await startRuntime({
      offline: {
        script: recordingScript(seen, () =>
          call++ === 0
            ? { toolCalls: [{ toolName: 'get_weather', input: {}, toolCallId: 'c9' }] }
            : { text: 'ok' },
        ),
      },
    });
    await t.runtime.runTurn({ message: 'a', sessionKey: 'default:openai:c2', clientTools: [weather] });
    await expect(
      t.runtime.runTurn({
        message: '',
        sessionKey: 'default:openai:c2',
        toolResults: [{ toolCallId: 'other', content: 'x' }],
      }),
    ).rejects.toSatisfy(
      (error) =>
        isAgentRuntimeError(error, 'INVALID_OPTIONS') && error.message.includes('toolResults.0.toolCallId'),
    );
    await t.runtime.runTurn({ message: 'never mind', sessionKey: 'default:openai:c2' });
    expect(seen[1]?.messages.slice(-2)).toEqual([
      {
        role: 'tool',
        toolCallId: 'c9',
        toolName: 'get_weather',
        content: 'No result: the client did not run this tool call.',
        isError: true,
      },
      { role: 'user', content: 'never mind' },
    ]);
  });

  it('toolChoice none offers no tools; what the provider cannot honour is refused naming the field', async () => {
    const seen: ModelRequest[] = [];
    const t = await startRuntime({ offline: { script: recordingScript(seen, 'plain') } });
    await t.runtime.runTurn({
      message: 'hi',
      sessionKey: 'default:openai:c3',
      clientTools: [weather],
      callOptions: { toolChoice: 'none' },
    });
    expect(seen[0]?.tools).toEqual([]);
    const refused = async (request: Parameters<typeof t.runtime.runTurn>[0], field: string) =>
      expect(t.runtime.runTurn({ sessionKey: 'default:openai:c3', ...request })).rejects.toSatisfy(
        (error) => isAgentRuntimeError(error, 'INVALID_OPTIONS') && error.message.includes(field),
      );
    await refused({ message: '', images: [{ url: 'data:image/png;base64,AAAA' }] }, 'images');
    await refused(
      { message: 'x', callOptions: { responseFormat: { type: 'json' } } },
      'callOptions.responseFormat',
    );
    await refused({ message: 'x', callOptions: { toolChoice: 'required' } }, 'callOptions.toolChoice');
    await refused({ message: '' }, 'message');
    expect(seen).toHaveLength(1);
  });

  it('sends images with the turn to a provider that takes them', async () => {
    const seen: ModelRequest[] = [];
    // A vision model: the offline provider's wire, with images taken.
    const t = await startRuntime({
      providerFactory: (id) => ({
        ...createOfflineProvider({ id, script: recordingScript(seen, 'a cat') }),
        capabilities: { images: true, json: true, jsonObject: true, forcedToolChoice: true },
      }),
    });
    await t.runtime.runTurn({
      message: '',
      sessionKey: 'default:openai:c4',
      images: [{ url: 'https://example.test/cat.png' }],
    });
    expect(seen[0]?.messages.at(-1)).toEqual({
      role: 'user',
      content: '',
      images: [{ url: 'https://example.test/cat.png' }],
    });
    // The session keeps a note of the image, not the image.
    const { messages } = await t.runtime.sessions.history('default:openai:c4');
    expect(messages[0]).toMatchObject({ role: 'user', content: '[1 image(s)]' });
  });

  it('refuses a JSON answer without a schema from Anthropic, which has no such mode', async () => {
    const t = await startRuntime({
      providerFactory: (id) =>
        createAnthropicProvider({ id, apiKey: 'sk-unused', baseUrl: 'http://127.0.0.1:9/v1' }),
    });
    await expect(
      t.runtime.runTurn({
        message: 'x',
        sessionKey: 'default:openai:c5',
        callOptions: { responseFormat: { type: 'json' } },
      }),
    ).rejects.toSatisfy(
      (error) =>
        isAgentRuntimeError(error, 'INVALID_OPTIONS') &&
        error.message.includes('a JSON answer without a schema'),
    );
  });
});
