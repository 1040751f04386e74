import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateObject, generateText, jsonSchema, stepCountIs, tool } from 'ai';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type FakeProvider,
  type FakeReply,
  startFakeOpenAi,
} from '../../../packages/agent-runtime/test/fake-providers.js';
import type { RunningDaemon } from '../src/index.js';
import { ADMIN_TOKEN, daemonPool, openAiFailure, openAiProviders } from './helpers.js';

const pool = daemonPool('agentd-openai-clients-');
afterEach(() => pool.cleanup());

type Body = Record<string, unknown>;
type WireMessage = { role: string; content?: unknown; tool_call_id?: string; tool_calls?: unknown };

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/**
 * The upstream model: calls `get_weather` when offered it and no tool result is in yet, answers
 * the tool result when there is one, answers JSON when a JSON format is asked, else echoes.
 */
function upstreamReply(body: Body): FakeReply {
  const messages = body.messages as WireMessage[];
  const last = messages.at(-1);
  if (last?.role === 'tool') return { text: `It is ${String(last.content)} there.` };
  const tools = (body.tools as Array<{ function: { name: string } }> | undefined) ?? [];
  if (tools.some((offered) => offered.function.name === 'get_weather') && body.tool_choice !== 'none') {
    return {
      toolCalls: [{ id: 'call_w1', name: 'get_weather', input: { city: 'Oslo' } }],
      finishReason: 'tool_calls',
    };
  }
  if (body.response_format) return { text: '{"name":"Ada","age":36}' };
  return { text: 'plain answer' };
}

async function start(): Promise<{ daemon: RunningDaemon; model: FakeProvider; client: OpenAI }> {
  const model = pool.closeAfter(await startFakeOpenAi({ apiKey: 'sk-up', respond: upstreamReply }));
  const daemon = await pool.start(pool.tempDir(), {
    config: {
      openaiApi: { enabled: true },
      memory: { enabled: true },
      providers: openAiProviders('oai', model.url, 'MODEL_KEY', ['gpt-fake']),
      agents: { entries: { default: { name: 'default', provider: 'oai', tools: [] } } },
    },
    env: { MODEL_KEY: 'sk-up' },
  });
  const client = new OpenAI({ apiKey: ADMIN_TOKEN, baseURL: `${daemon.url}/v1`, maxRetries: 0 });
  return { daemon, model, client };
}

/** The bodies the upstream received on `/v1/chat/completions`. */
function upstreamBodies(model: FakeProvider): Body[] {
  return model.requests
    .filter((request) => request.path === '/v1/chat/completions')
    .map((request) => request.body!);
}

function messagesOf(body: Body | undefined): WireMessage[] {
  return (body?.messages ?? []) as WireMessage[];
}

describe('/v1 with the official openai client', () => {
  it('runs a client tool loop: tool_calls out, tool messages in, the same turn continued', async () => {
    const { model, client } = await start();
    const asked = [{ role: 'user' as const, content: 'Weather in Oslo?' }];
    const { data: first, response } = await client.chat.completions
      .create({
        model: 'agentd/default',
        messages: asked,
        tools: [weatherTool],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        user: 'loop',
      })
      .withResponse();
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls).toEqual([
      { id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
    ]);
    const [offered] = upstreamBodies(model);
    expect(
      ((offered?.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name),
    ).toContain('get_weather');
    expect(offered?.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });

    const second = await client.chat.completions.create({
      model: 'agentd/default',
      messages: [...asked, choice.message, { role: 'tool', tool_call_id: 'call_w1', content: 'sunny' }],
      tools: [weatherTool],
      user: 'loop',
    });
    expect(second.choices[0]?.finish_reason).toBe('stop');
    expect(second.choices[0]?.message.content).toBe('It is sunny there.');
    expect(response.headers.get('x-agentd-session')).toBe('default:openai:loop');
    const continued = messagesOf(upstreamBodies(model)[1]);
    expect(continued.slice(-3).map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    expect(continued.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_w1', content: 'sunny' });
  });

  it('streams client tool calls as tool_calls deltas ending with finish_reason tool_calls', async () => {
    const { client } = await start();
    const stream = await client.chat.completions.create({
      model: 'agentd/default',
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: [weatherTool],
      stream: true,
    });
    const calls: Array<{ id?: string; name?: string; arguments: string }> = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      for (const call of delta?.tool_calls ?? []) {
        calls[call.index] ??= { arguments: '' };
        const slot = calls[call.index]!;
        if (call.id) slot.id = call.id;
        if (call.function?.name) slot.name = call.function.name;
        slot.arguments += call.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe('tool_calls');
    expect(calls).toEqual([{ id: 'call_w1', name: 'get_weather', arguments: '{"city":"Oslo"}' }]);
  });

  it('passes sampling, limits, stop, seed, response_format and images through to the model', async () => {
    const { model, client } = await start();
    const png =
      'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const completion = await client.chat.completions.create({
      model: 'agentd/default',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Who is this?' },
            { type: 'image_url', image_url: { url: png } },
            { type: 'image_url', image_url: { url: 'https://images.example.test/ada.jpg' } },
          ],
        },
      ],
      temperature: 0.3,
      top_p: 0.8,
      max_completion_tokens: 123,
      stop: ['END'],
      seed: 42,
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'person',
          schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        },
      },
    });
    expect(completion.choices[0]?.message.content).toBe('{"name":"Ada","age":36}');
    const [body] = upstreamBodies(model);
    expect(body).toMatchObject({ temperature: 0.3, top_p: 0.8, max_tokens: 123, stop: ['END'], seed: 42 });
    expect(body?.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'person', schema: { required: ['name'] } },
    });
    const user = messagesOf(body).at(-1)!;
    expect(user.content).toEqual([
      { type: 'text', text: 'Who is this?' },
      { type: 'image_url', image_url: { url: png } },
      { type: 'image_url', image_url: { url: 'https://images.example.test/ada.jpg' } },
    ]);

    // A message holding only an image is a turn too; json_object reaches the model as asked.
    await client.chat.completions.create({
      model: 'agentd/default',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: png } }] }],
      response_format: { type: 'json_object' },
    });
    const [, onlyImage] = upstreamBodies(model);
    expect(onlyImage?.response_format).toEqual({ type: 'json_object' });
    expect(messagesOf(onlyImage).at(-1)?.content).toEqual([{ type: 'image_url', image_url: { url: png } }]);
  });

  it('runs function tools on /v1/responses: function_call out, function_call_output in', async () => {
    const { model, client } = await start();
    const first = await client.responses.create({
      model: 'agentd/default',
      input: 'Weather in Oslo?',
      tools: [
        { type: 'function', name: 'get_weather', parameters: weatherTool.function.parameters, strict: false },
      ],
    });
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({
      type: 'function_call',
      call_id: 'call_w1',
      name: 'get_weather',
      arguments: '{"city":"Oslo"}',
    });
    const second = await client.responses.create({
      model: 'agentd/default',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'call_w1', output: 'rainy' }],
    });
    expect(second.output_text).toBe('It is rainy there.');
    expect(messagesOf(upstreamBodies(model)[1]).at(-1)).toMatchObject({
      role: 'tool',
      tool_call_id: 'call_w1',
      content: 'rainy',
    });
  });

  it('embeddings: honours dimensions, refuses token arrays by name, and "hi" has a direction', async () => {
    const { client } = await start();
    const sized = await client.embeddings.create({ model: 'agentd/memory', input: 'hi', dimensions: 64 });
    expect(sized.data[0]?.embedding).toHaveLength(64);
    const hi = await client.embeddings.create({
      model: 'agentd/memory',
      input: 'hi',
      encoding_format: 'float',
    });
    expect(hi.data[0]?.embedding.some((value) => value !== 0)).toBe(true);
    const refused = await openAiFailure(
      client.embeddings.create({ model: 'agentd/memory', input: [[15339, 1917]] }),
    );
    expect(refused.status).toBe(400);
    expect(refused.param).toBe('input[0]');
    expect(refused.message).toContain('Token-id input is not taken');
    const tooBig = await openAiFailure(
      client.embeddings.create({ model: 'agentd/memory', input: 'x', dimensions: 5 }),
    );
    expect(tooBig.status).toBe(400);
    expect(tooBig.param).toBe('dimensions');
  });
});

describe('/v1 with the Vercel AI SDK', () => {
  it('generateText runs client tools to an answer with stopWhen, and generateObject gets its object', async () => {
    const { daemon, model } = await start();
    const agentd = createOpenAICompatible({
      name: 'agentd',
      baseURL: `${daemon.url}/v1`,
      apiKey: ADMIN_TOKEN,
      supportsStructuredOutputs: true,
      // One session for the whole loop, as a client names it.
      headers: { 'x-agentd-session': 'default:openai:vercel' },
    });
    const ran: unknown[] = [];
    const result = await generateText({
      model: agentd.chatModel('agentd/default'),
      prompt: 'Weather in Oslo?',
      tools: {
        get_weather: tool({
          description: 'The weather of a city',
          inputSchema: jsonSchema<{ city: string }>(weatherTool.function.parameters),
          execute: async (input) => {
            ran.push(input);
            return 'foggy';
          },
        }),
      },
      // The first step must call a tool; later ones may answer (a loop that always must never ends).
      prepareStep: ({ stepNumber }) => ({ toolChoice: stepNumber === 0 ? 'required' : 'auto' }),
      stopWhen: stepCountIs(3),
    });
    expect(ran).toEqual([{ city: 'Oslo' }]);
    expect(result.steps[0]?.finishReason).toBe('tool-calls');
    expect(result.text).toBe('It is foggy there.');
    expect(upstreamBodies(model)[0]?.tool_choice).toBe('required');

    const { object } = await generateObject({
      model: agentd.chatModel('agentd/default'),
      prompt: 'A person',
      schema: jsonSchema<{ name: string; age: number }>({
        type: 'object',
        properties: { name: { type: 'string' }, age: { type: 'number' } },
        required: ['name', 'age'],
        additionalProperties: false,
      }),
    });
    expect(object).toEqual({ name: 'Ada', age: 36 });
    expect(upstreamBodies(model).at(-1)?.response_format).toMatchObject({ type: 'json_schema' });
  });
});

describe('/v1 against a model that cannot honour a field', () => {
  it('answers 400 naming the field (offline provider: images, response_format, a forced tool)', async () => {
    const daemon = await pool.start(pool.tempDir(), { config: { openaiApi: { enabled: true } } });
    const client = new OpenAI({ apiKey: ADMIN_TOKEN, baseURL: `${daemon.url}/v1`, maxRetries: 0 });
    const image = await openAiFailure(
      client.chat.completions.create({
        model: 'agentd/default',
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] },
        ],
      }),
    );
    expect([image.status, image.param]).toEqual([400, 'messages']);
    const format = await openAiFailure(
      client.chat.completions.create({
        model: 'agentd/default',
        messages: [{ role: 'user', content: 'x' }],
        response_format: { type: 'json_object' },
      }),
    );
    expect([format.status, format.param]).toEqual([400, 'response_format']);
    const forced = await openAiFailure(
      client.chat.completions.create({
        model: 'agentd/default',
        messages: [{ role: 'user', content: 'x' }],
        tools: [weatherTool],
        tool_choice: 'required',
      }),
    );
    expect([forced.status, forced.param]).toEqual([400, 'tool_choice']);
    const responsesFormat = await openAiFailure(
      client.responses.create({
        model: 'agentd/default',
        input: 'x',
        text: { format: { type: 'json_object' } },
      }),
    );
    expect([responsesFormat.status, responsesFormat.param]).toEqual([400, 'text.format']);
    const audio = await openAiFailure(
      client.chat.completions.create({
        model: 'agentd/default',
        messages: [
          { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] },
        ],
      }),
    );
    expect([audio.status, audio.param]).toEqual([400, 'messages[0].content[0].type']);
  });

  it('answers 400 naming response_format for json_schema when the provider is pinned without it', async () => {
    const model = pool.closeAfter(await startFakeOpenAi({ apiKey: 'sk-up', respond: upstreamReply }));
    const daemon = await pool.start(pool.tempDir(), {
      config: {
        openaiApi: { enabled: true },
        providers: openAiProviders('oai', model.url, 'MODEL_KEY', ['gpt-fake'], {
          capabilities: { jsonSchema: false },
        }),
        agents: { entries: { default: { name: 'default', provider: 'oai', tools: [] } } },
      },
      env: { MODEL_KEY: 'sk-up' },
    });
    const client = new OpenAI({ apiKey: ADMIN_TOKEN, baseURL: `${daemon.url}/v1`, maxRetries: 0 });
    const refused = await openAiFailure(
      client.chat.completions.create({
        model: 'agentd/default',
        messages: [{ role: 'user', content: 'Who?' }],
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'person',
            schema: { type: 'object', properties: { name: { type: 'string' } } },
          },
        },
      }),
    );
    expect([refused.status, refused.param]).toEqual([400, 'response_format']);
    expect(refused.message).toContain('capabilities.jsonSchema is false');
    expect(upstreamBodies(model)).toEqual([]);
    // JSON mode without a schema is still the model's to honour.
    const json = await client.chat.completions.create({
      model: 'agentd/default',
      messages: [{ role: 'user', content: 'Who?' }],
      response_format: { type: 'json_object' },
    });
    expect(json.choices[0]?.message.content).toBe('{"name":"Ada","age":36}');
    expect(upstreamBodies(model).at(-1)?.response_format).toEqual({ type: 'json_object' });
  });
});
