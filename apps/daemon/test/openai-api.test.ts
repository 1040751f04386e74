import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningDaemon } from '../src/index.js';
import { ADMIN_TOKEN, daemonPool, openAiFailure, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-openai-api-');
/** The test's daemon, which the helpers below call. */
let daemon: RunningDaemon | undefined;
afterEach(async () => {
  await pool.cleanup();
  daemon = undefined;
});

/** The official client against the test daemon's `/v1`; no retries, so a 429 is seen as it is. */
function openai(token = ADMIN_TOKEN): OpenAI {
  return new OpenAI({ apiKey: token, baseURL: `${daemon!.url}/v1`, maxRetries: 0 });
}

describe('OpenAI-compatible API (/v1)', () => {
  it('is off by default and turned on live by openaiApi.enabled', async () => {
    daemon = await pool.start(pool.tempDir());
    const off = await openAiFailure(openai().models.list());
    expect(off.status).toBe(404);
    expect(off.code).toBe('api_disabled');
    await rpcClient(daemon.url).call('config.patch', { openaiApi: { enabled: true } });
    const models = await openai().models.list();
    expect(models.data.map((model) => model.id)).toContain('agentd/default');
  });

  it('lists the agents as models and answers a completion with usage matching obs.billing', async () => {
    daemon = await pool.start(pool.tempDir(), {
      config: {
        openaiApi: { enabled: true },
        agents: { entries: { helper: { name: 'helper' } } },
      },
    });
    const client = openai();
    const models = await client.models.list();
    expect(models.data.map((model) => model.id).sort()).toEqual(['agentd/default', 'agentd/helper']);
    expect(models.data[0]).toMatchObject({ object: 'model', owned_by: 'agentd' });

    const { data: completion, response } = await client.chat.completions
      .create({
        model: 'agentd/helper',
        messages: [
          { role: 'system', content: 'ignored: the agent has its own prompt' },
          { role: 'user', content: 'hello there' },
        ],
        user: 'alice',
      })
      .withResponse();
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('agentd/helper');
    expect(completion.choices[0]?.message.role).toBe('assistant');
    expect(completion.choices[0]?.message.content).toContain('offline');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    const sessionKey = response.headers.get('x-agentd-session');
    expect(sessionKey).toBe('default:openai:alice');

    const admin = rpcClient(daemon.url);
    const billed = await admin.call<{ totalTokens: number; callCount: number }>('obs.billing.bySession', {
      sessionKey,
    });
    const usage = completion.usage!;
    expect(usage.total_tokens).toBeGreaterThan(0);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
    expect(billed.totalTokens).toBe(usage.total_tokens);
    const history = await admin.call<{ messages: Array<{ role: string; content: string }> }>(
      'session.history',
      { key: sessionKey },
    );
    expect(history.messages.map((message) => message.role)).toEqual(['user', 'assistant']);

    // The same `user` continues the same session; the header names one directly.
    await client.chat.completions.create({
      model: 'agentd/helper',
      messages: [{ role: 'user', content: 'again' }],
      user: 'alice',
    });
    const named = await client.chat.completions.create(
      { model: 'agentd/helper', messages: [{ role: 'user', content: 'by header' }] },
      { headers: { 'x-agentd-session': 'default:chat:bob' } },
    );
    expect((named as unknown as { agentd: { sessionKey: string } }).agentd.sessionKey).toBe(
      'default:chat:bob',
    );
    const sessions = await admin.call<{ messages: unknown[] }>('session.history', { key: sessionKey });
    expect(sessions.messages).toHaveLength(4);
  });

  it('streams a completion chunk by chunk, ending with usage and [DONE]', async () => {
    daemon = await pool.start(pool.tempDir(), { config: { openaiApi: { enabled: true } } });
    const client = openai();
    const stream = await client.chat.completions.create({
      model: 'agentd/default',
      messages: [{ role: 'user', content: 'tell me something in several words please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    const deltas = chunks.filter((chunk) => (chunk.choices[0]?.delta.content ?? '') !== '');
    expect(deltas.length).toBeGreaterThan(1);
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true);
    const finish = chunks.find((chunk) => chunk.choices[0]?.finish_reason);
    expect(finish?.choices[0]?.finish_reason).toBe('stop');
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage?.total_tokens).toBeGreaterThan(0);

    // The same turn unstreamed gives the same text (the offline provider is deterministic).
    const whole = await client.chat.completions.create({
      model: 'agentd/default',
      messages: [{ role: 'user', content: 'tell me something in several words please' }],
    });
    expect(text).toBe(whole.choices[0]?.message.content);
    const admin = rpcClient(daemon.url);
    const total = await admin.call<{ totalTokens: number }>('obs.billing.total', {});
    expect(total.totalTokens).toBe(last.usage!.total_tokens + whole.usage!.total_tokens);
  });

  it('answers OpenAI-style errors: wrong token 401, oversized body 413, unknown model 404, bad request 400, rate 429', async () => {
    daemon = await pool.start(pool.tempDir(), {
      config: {
        openaiApi: { enabled: true, maxBodyBytes: 4096, rateLimit: { maxRequests: 5, windowMs: 60_000 } },
      },
    });
    const wrong = await openAiFailure(openai('not-a-token').models.list());
    expect(wrong.status).toBe(401);
    expect(wrong.code).toBe('invalid_api_key');
    expect(wrong.type).toBe('invalid_request_error');

    const client = openai();
    const big = await openAiFailure(
      client.chat.completions.create({
        model: 'agentd/default',
        messages: [{ role: 'user', content: 'x'.repeat(10_000) }],
      }),
    );
    expect(big.status).toBe(413);
    expect(big.code).toBe('request_too_large');

    const unknown = await openAiFailure(
      client.chat.completions.create({ model: 'agentd/nobody', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(unknown.status).toBe(404);
    expect(unknown.code).toBe('model_not_found');
    expect(unknown.param).toBe('model');

    const notUser = await openAiFailure(
      client.chat.completions.create({
        model: 'agentd/default',
        messages: [{ role: 'assistant', content: 'hi' }],
      }),
    );
    expect(notUser.status).toBe(400);
    expect(notUser.param).toBe('messages');

    const badType = await openAiFailure(
      client.chat.completions.create({ model: 'agentd/default', messages: 'hi' as never }),
    );
    expect(badType.status).toBe(400);
    expect(badType.param).toBe('messages');

    // Five requests per window for this token: the three above (after auth) and one more pass.
    await client.models.list();
    const limited = await openAiFailure(client.models.list());
    expect(limited.status).toBe(429);
    expect(limited.code).toBe('rate_limit_exceeded');
    expect(limited.headers?.get('retry-after')).toBe('60');
  });

  it("keeps a tenant-bound token in its tenant: its own user session, another tenant's session not found", async () => {
    daemon = await pool.start(pool.tempDir(), { config: { openaiApi: { enabled: true } } });
    const admin = rpcClient(daemon.url);
    const bound = await admin.call<{ token: string }>('tokens.create', {
      scopes: ['rpc'],
      id: 'acme-app',
      tenant: 'acme',
    });
    const client = openai(bound.token);
    const own = await client.chat.completions.create({
      model: 'agentd/default',
      messages: [{ role: 'user', content: 'hi' }],
      user: 'carol',
    });
    expect((own as unknown as { agentd: { sessionKey: string } }).agentd.sessionKey).toBe(
      'acme:openai:carol',
    );
    const refused = await openAiFailure(
      client.chat.completions.create(
        { model: 'agentd/default', messages: [{ role: 'user', content: 'hi' }] },
        { headers: { 'x-agentd-session': 'globex:chat:bob' } },
      ),
    );
    expect(refused.status).toBe(404);
    expect(refused.type).toBe('not_found_error');
  });

  it('answers the Responses API, streamed and not, continuing the session through previous_response_id', async () => {
    daemon = await pool.start(pool.tempDir(), { config: { openaiApi: { enabled: true } } });
    const client = openai();
    const first = await client.responses.create({ model: 'agentd/default', input: 'hello responses' });
    expect(first.object).toBe('response');
    expect(first.status).toBe('completed');
    expect(first.output_text).toContain('offline');
    expect(first.usage?.total_tokens).toBe(
      (first.usage?.input_tokens ?? 0) + (first.usage?.output_tokens ?? 0),
    );
    const sessionKey = (first as unknown as { agentd: { sessionKey: string } }).agentd.sessionKey;
    expect(sessionKey).toMatch(/^default:openai:/);

    const stream = await client.responses.create({
      model: 'agentd/default',
      input: [
        {
          role: 'user',
          content: [{ type: 'input_text', text: 'and a streamed follow-up in several words' }],
        },
      ],
      previous_response_id: first.id,
      stream: true,
    });
    const events: Array<{ type: string; sequence_number: number }> = [];
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(events[0]?.type).toBe('response.created');
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(events.filter((event) => event.type === 'response.output_text.delta').length).toBeGreaterThan(1);
    const message = completed?.output[0] as { content: Array<{ text: string }> } | undefined;
    expect(message?.content[0]?.text).toBe(text);
    const history = await rpcClient(daemon.url).call<{ messages: unknown[] }>('session.history', {
      key: sessionKey,
    });
    expect(history.messages).toHaveLength(4);

    const forged = await openAiFailure(
      client.responses.create({ model: 'agentd/default', input: 'x', previous_response_id: 'resp_nothing' }),
    );
    expect(forged.status).toBe(400);
    expect(forged.param).toBe('previous_response_id');
  });

  it('embeds through the memory embedder, as floats and as the base64 the SDK asks for', async () => {
    daemon = await pool.start(pool.tempDir(), {
      config: { openaiApi: { enabled: true }, memory: { enabled: true } },
    });
    const client = openai();
    const result = await client.embeddings.create({
      model: 'agentd/memory',
      input: ['red apples', 'green pears'],
    });
    expect(result.data).toHaveLength(2);
    const stats = await rpcClient(daemon.url).call<{ index: { dimensions: number; model: string } }>(
      'memory.stats',
    );
    expect(result.model).toBe(stats.index.model);
    expect(result.data[0]?.embedding).toHaveLength(stats.index.dimensions);
    const floats = await client.embeddings.create({
      model: 'agentd/memory',
      input: 'red apples',
      encoding_format: 'float',
    });
    const first = result.data[0]!.embedding;
    for (const [index, value] of floats.data[0]!.embedding.entries())
      expect(value).toBeCloseTo(first[index]!, 5);
    expect(result.usage.total_tokens).toBeGreaterThan(0);
  });
});
