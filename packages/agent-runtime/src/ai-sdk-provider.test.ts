import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type FakeProvider, startFakeAnthropic, startFakeOpenAi } from '../test/fake-providers.js';
import { startRuntime } from '../test/helpers.js';
import { chatRequest } from '../test/requests.js';
import {
  createAnthropicProvider,
  createOpenAiCompatibleProvider,
  type HttpProviderOptions,
} from './ai-sdk-provider.js';
import type { ModelProvider, ModelRequest, ModelStreamEvent } from './provider.js';

const KEY = 'sk-test-0123456789abcdef';
let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return chatRequest('hello there', {
    model: 'fake-model',
    system: 'be terse',
    maxOutputTokens: 256,
    ...overrides,
  });
}

/** The OpenAI-compatible provider `oai` on a fake server, with the test key unless `options` say otherwise. */
function openAiOn(server: FakeProvider, options: Partial<HttpProviderOptions> = {}): ModelProvider {
  return createOpenAiCompatibleProvider({ id: 'oai', baseUrl: server.url, apiKey: KEY, ...options });
}

async function collect(provider: ModelProvider, input: ModelRequest): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of provider.stream(input)) events.push(event);
  return events;
}

function text(events: ModelStreamEvent[]): string {
  return events.map((event) => (event.type === 'text-delta' ? event.text : '')).join('');
}

const addSpec = {
  name: 'add',
  description: 'Adds',
  inputSchema: z.toJSONSchema(z.object({ a: z.number(), b: z.number() })) as Record<string, unknown>,
};

describe('createOpenAiCompatibleProvider', () => {
  it('streams deltas over SSE and reports usage with cached prompt tokens', async () => {
    fake = await startFakeOpenAi({
      apiKey: KEY,
      respond: () => ({ text: 'Hello from the fake model', usage: { input: 40, output: 6, cacheRead: 32 } }),
    });
    const provider = openAiOn(fake);
    const events = await collect(provider, request());
    expect(events.filter((event) => event.type === 'text-delta').length).toBeGreaterThan(2);
    expect(text(events)).toBe('Hello from the fake model');
    expect(events.at(-1)).toEqual({
      type: 'finish',
      finishReason: 'stop',
      usage: { inputTokens: 40, outputTokens: 6, cacheReadTokens: 32, cacheWriteTokens: 0 },
    });
    const sent = fake.requests[0];
    expect(sent?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent?.body).toMatchObject({
      model: 'fake-model',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 256,
      messages: [
        { role: 'system', content: 'be terse' },
        { role: 'user', content: 'hello there' },
      ],
    });
  });

  it('offers tools, parses streamed tool calls and sends tool results back', async () => {
    fake = await startFakeOpenAi({
      apiKey: KEY,
      respond: (_body, index) =>
        index === 0
          ? { toolCalls: [{ id: 'call_1', name: 'add', input: { a: 2, b: 40 } }] }
          : { text: 'it is 42' },
    });
    const provider = openAiOn(fake);
    const first = await collect(provider, request({ tools: [addSpec] }));
    expect(first.filter((event) => event.type === 'tool-call')).toEqual([
      { type: 'tool-call', toolCallId: 'call_1', toolName: 'add', input: { a: 2, b: 40 } },
    ]);
    expect(first.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool_calls' });
    expect(fake.requests[0]?.body?.tools).toEqual([
      expect.objectContaining({ type: 'function', function: expect.objectContaining({ name: 'add' }) }),
    ]);

    const second = await collect(
      provider,
      request({
        tools: [addSpec],
        messages: [
          { role: 'user', content: 'add 2 and 40' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [{ toolCallId: 'call_1', toolName: 'add', input: { a: 2, b: 40 } }],
          },
          { role: 'tool', toolCallId: 'call_1', toolName: 'add', content: '{"sum":42}' },
        ],
      }),
    );
    expect(text(second)).toBe('it is 42');
    const messages = fake.requests[1]?.body?.messages as Array<Record<string, unknown>>;
    expect(messages.at(-2)).toMatchObject({
      role: 'assistant',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":40}' } },
      ],
    });
    expect(messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_1', content: '{"sum":42}' });
  });

  it('maps a reply cut at the token limit to length', async () => {
    fake = await startFakeOpenAi({ apiKey: KEY, respond: () => ({ text: 'cut', finishReason: 'length' }) });
    const provider = openAiOn(fake);
    expect((await collect(provider, request())).at(-1)).toMatchObject({ finishReason: 'length' });
  });

  it('retries 429 and 5xx answers with backoff, honouring retry-after-ms', async () => {
    fake = await startFakeOpenAi({ apiKey: KEY });
    fake.failures.push(
      { status: 429, headers: { 'retry-after-ms': '30' }, body: { error: { message: 'slow down' } } },
      { status: 503, headers: { 'retry-after': '0' }, body: { error: { message: 'overloaded' } } },
    );
    const provider = openAiOn(fake);
    const started = Date.now();
    const events = await collect(provider, request());
    expect(text(events)).toBe('echo: hello there');
    expect(fake.requests).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(30);
  });

  it('gives up after maxRetries with a rate-limit error', async () => {
    fake = await startFakeOpenAi({ apiKey: KEY });
    for (let i = 0; i < 3; i++)
      fake.failures.push({ status: 429, headers: { 'retry-after-ms': '1' }, body: {} });
    const provider = openAiOn(fake, { maxRetries: 2 });
    await expect(collect(provider, request())).rejects.toMatchObject({ code: 'PROVIDER_RATE_LIMITED' });
    expect(fake.requests).toHaveLength(3);
  });

  it('does not retry a refused key, and never puts the key into the error', async () => {
    fake = await startFakeOpenAi({ apiKey: 'the-right-key' });
    const provider = openAiOn(fake);
    const error = await collect(provider, request()).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      code: 'PROVIDER_AUTH',
      message: 'Provider oai: credential refused (HTTP 401)',
    });
    expect(
      JSON.stringify({ error, data: (error as { data: unknown }).data, cause: (error as Error).cause }),
    ).not.toContain(KEY);
    expect(String((error as Error).stack)).not.toContain(KEY);
    expect(fake.requests).toHaveLength(1);
  });

  it('times out a request that stalls past timeoutMs', async () => {
    fake = await startFakeOpenAi({ apiKey: KEY, respond: () => ({ text: 'late', hangMs: 2000 }) });
    const provider = openAiOn(fake, { timeoutMs: 100 });
    await expect(collect(provider, request())).rejects.toMatchObject({ code: 'PROVIDER_TIMEOUT' });
  });

  it('cancels the HTTP request when the signal aborts mid-stream', async () => {
    fake = await startFakeOpenAi({
      apiKey: KEY,
      respond: () => ({ text: 'a'.repeat(400), chunkDelayMs: 20 }),
    });
    const provider = openAiOn(fake);
    const controller = new AbortController();
    const seen: string[] = [];
    const run = (async () => {
      for await (const event of provider.stream(request({ signal: controller.signal }))) {
        if (event.type === 'text-delta') seen.push(event.text);
        if (seen.length === 3) controller.abort(new Error('user went away'));
      }
    })();
    await expect(run).rejects.toThrow('user went away');
    await fake.aborted;
    expect(seen.length).toBeLessThan(80);
  });

  it('probes the models endpoint with the key', async () => {
    fake = await startFakeOpenAi({ apiKey: KEY });
    await openAiOn(fake).probe(AbortSignal.timeout(5000));
    await expect(openAiOn(fake, { apiKey: 'wrong' }).probe(AbortSignal.timeout(5000))).rejects.toMatchObject({
      code: 'PROVIDER_AUTH',
    });
    expect(fake.requests.map((sent) => `${sent.method} ${sent.path}`)).toEqual([
      'GET /v1/models',
      'GET /v1/models',
    ]);
  });
});

describe('createAnthropicProvider', () => {
  it('streams Messages events and reports cache read and creation tokens', async () => {
    fake = await startFakeAnthropic({
      apiKey: KEY,
      respond: () => ({
        text: 'Bonjour from Claude',
        usage: { input: 50, output: 8, cacheRead: 400, cacheWrite: 30 },
      }),
    });
    const provider = createAnthropicProvider({ id: 'ant', baseUrl: fake.url, apiKey: KEY });
    const events = await collect(provider, request());
    expect(text(events)).toBe('Bonjour from Claude');
    const finish = events.at(-1);
    expect(finish).toMatchObject({ type: 'finish', finishReason: 'stop' });
    if (finish?.type !== 'finish') throw new Error('no finish');
    expect(finish.usage.outputTokens).toBe(8);
    expect(finish.usage.cacheReadTokens).toBe(400);
    expect(finish.usage.cacheWriteTokens).toBe(30);
    // The SDK reports input including cached tokens, as the runtime's usage contract expects.
    expect(finish.usage.inputTokens).toBe(480);
    const sent = fake.requests[0];
    expect(sent?.headers['x-api-key']).toBe(KEY);
    expect(sent?.headers['anthropic-version']).toBeDefined();
    expect(sent?.body).toMatchObject({ model: 'fake-model', stream: true, max_tokens: 256 });
    expect(JSON.stringify(sent?.body?.system)).toContain('be terse');
  });

  it('parses tool_use blocks into tool calls', async () => {
    fake = await startFakeAnthropic({
      apiKey: KEY,
      respond: () => ({
        text: 'let me add',
        toolCalls: [{ id: 'toolu_1', name: 'add', input: { a: 1, b: 2 } }],
      }),
    });
    const provider = createAnthropicProvider({ id: 'ant', baseUrl: fake.url, apiKey: KEY });
    const events = await collect(provider, request({ tools: [addSpec] }));
    expect(events.filter((event) => event.type === 'tool-call')).toEqual([
      { type: 'tool-call', toolCallId: 'toolu_1', toolName: 'add', input: { a: 1, b: 2 } },
    ]);
    expect(events.at(-1)).toMatchObject({ finishReason: 'tool_calls' });
    expect(fake.requests[0]?.body?.tools).toEqual([
      expect.objectContaining({ name: 'add', input_schema: expect.any(Object) }),
    ]);
  });

  it('retries an overloaded (529) answer and maps a refused key to PROVIDER_AUTH', async () => {
    fake = await startFakeAnthropic({ apiKey: KEY });
    fake.failures.push({
      status: 529,
      headers: { 'retry-after': '0' },
      body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    });
    const provider = createAnthropicProvider({ id: 'ant', baseUrl: fake.url, apiKey: KEY });
    expect(text(await collect(provider, request()))).toBe('echo: hello there');
    expect(fake.requests).toHaveLength(2);
    const refused = createAnthropicProvider({ id: 'ant', baseUrl: fake.url, apiKey: 'nope' });
    await expect(collect(refused, request())).rejects.toMatchObject({ code: 'PROVIDER_AUTH' });
    await expect(refused.probe(AbortSignal.timeout(5000))).rejects.toMatchObject({ code: 'PROVIDER_AUTH' });
  });
});

describe('createAgentRuntime with HTTP providers', () => {
  it('runs a tool-using turn through the OpenAI-compatible wire format and bills cache tokens', async () => {
    fake = await startFakeOpenAi({
      apiKey: KEY,
      respond: (body, index) => {
        if (index === 0)
          return {
            toolCalls: [{ id: 'call_9', name: 'add', input: { a: 20, b: 22 } }],
            usage: { input: 100, output: 10 },
          };
        const messages = body.messages as Array<{ role: string; content: string }>;
        return {
          text: `the tool said ${messages.at(-1)?.content}`,
          usage: { input: 150, output: 12, cacheRead: 100 },
        };
      },
    });
    const t = await startRuntime({
      resolveSecret: (name) => (name === 'FAKE_KEY' ? KEY : undefined),
      tools: [
        {
          name: 'add',
          description: 'Adds',
          params: z.object({ a: z.number(), b: z.number() }),
          handler: async ({ a, b }) => ({ sum: a + b }),
        },
      ],
      providers: {
        entries: {
          fake: {
            type: 'openai-compatible',
            baseUrl: fake.url,
            apiKey: '${secret:FAKE_KEY}',
            models: ['gpt-fake'],
            prices: { inputPerMillion: 1, outputPerMillion: 2, cacheReadPerMillion: 0.1 },
          },
        },
      },
      agents: { entries: { remote: { name: 'Remote', provider: 'fake', tools: ['add'] } } },
    });
    const result = await t.runtime.runTurn({ agentId: 'remote', message: 'what is 20+22?', sessionKey: 'r' });
    expect(result).toMatchObject({
      response: 'the tool said {"sum":42}',
      finishReason: 'stop',
      tokensUsed: { input: 250, output: 22, total: 272 },
      steps: 2,
    });
    expect((await t.runtime.billing.total()).totalCost).toBeCloseTo((150 * 1 + 100 * 0.1 + 22 * 2) / 1e6, 9);
    expect((await t.runtime.cacheStats()).cacheReadTokens).toBe(100);
  });
});
