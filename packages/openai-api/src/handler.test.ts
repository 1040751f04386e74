import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiApiError } from './errors.js';
import { createOpenAiApiHandler, type OpenAiApiHandlerOptions } from './handler.js';
import type { ChatTurn, OpenAiBackend } from './types.js';

interface Caller {
  id: string;
}

let server: Server | undefined;
afterEach(async () => {
  await new Promise((done) => server?.close(done) ?? done(undefined));
  server = undefined;
});

function backend(
  overrides: Partial<OpenAiBackend<Caller>> = {},
): OpenAiBackend<Caller> & { turns: ChatTurn[] } {
  const turns: ChatTurn[] = [];
  return {
    turns,
    listModels: () => [{ agentId: 'default', createdMs: 2_000 }],
    session: (_caller, choice) => choice.header ?? `s:${choice.user ?? 'fresh'}`,
    async chat(_caller, turn) {
      turns.push(turn);
      if (turn.agentId !== 'default')
        throw new OpenAiApiError(404, 'invalid_request_error', 'model_not_found', 'no');
      for (const word of ['one ', 'two']) turn.onDelta?.(word);
      return {
        response: 'one two',
        tokensUsed: { input: 3, output: 2, total: 5 },
        finishReason: 'timeout',
        sessionKey: turn.sessionKey,
      };
    },
    embed: async (_caller, input) => ({ model: 'hash', vectors: input.map(() => [0.5, -1]) }),
    ...overrides,
  };
}

async function serve(options: Partial<OpenAiApiHandlerOptions<Caller>> = {}): Promise<string> {
  const handler = createOpenAiApiHandler<Caller>({
    authenticate: (request) => (request.headers.authorization === 'Bearer good' ? { id: 'token-1' } : null),
    backend: backend(),
    callerKey: (caller) => caller.id,
    now: () => 1_700_000_000_000,
    randomId: () => 'fixed',
    ...options,
  });
  server = createServer((request, response) => void handler(request, response));
  await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
}

/** The parts of an answer body the tests read. */
interface Answer {
  error: { message: string; code: string; type: string };
  data: Array<{ embedding: unknown }>;
}

const json = (response: Response): Promise<Answer> => response.json() as Promise<Answer>;

const auth = { authorization: 'Bearer good', 'content-type': 'application/json' };

/** POSTs `body` as JSON to `<url><path>` with the good token. */
const postJson = (url: string, path: string, body: unknown, signal?: AbortSignal): Promise<Response> =>
  fetch(`${url}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body), signal });

describe('createOpenAiApiHandler', () => {
  it('maps a finish reason OpenAI does not know to stop and keeps the agent one under agentd', async () => {
    const url = await serve();
    const response = await postJson(url, '/v1/chat/completions', {
      model: 'agentd/default',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({
      id: 'chatcmpl-fixed',
      created: 1_700_000_000,
      choices: [{ finish_reason: 'stop', message: { content: 'one two' } }],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
      agentd: { finishReason: 'timeout', sessionKey: 's:fresh' },
    });
  });

  it('streams without usage fields unless include_usage is asked for, ending with [DONE]', async () => {
    const url = await serve();
    const response = await postJson(url, '/v1/chat/completions', {
      model: 'default',
      stream: true,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = (await response.text()).split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice('data: '.length)));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'one ' },
      { content: 'two' },
      {},
    ]);
    expect(chunks.every((chunk) => !('usage' in chunk))).toBe(true);
  });

  it('answers a turn that fails before streaming with its HTTP status, not an open stream', async () => {
    const url = await serve();
    const response = await postJson(url, '/v1/chat/completions', {
      model: 'agentd/other',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(response.status).toBe(404);
    expect((await json(response)).error.code).toBe('model_not_found');
  });

  it('sends a failure after the stream opened as an error event, then [DONE]', async () => {
    const url = await serve({
      backend: backend({
        async chat(_caller, turn) {
          turn.onDelta?.('partial');
          throw new Error('provider exploded with a secret detail');
        },
      }),
    });
    const response = await postJson(url, '/v1/chat/completions', {
      model: 'default',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"type":"server_error"');
    expect(text).not.toContain('secret detail');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('refuses bad JSON, deep nesting, __proto__ keys, wrong methods and unknown paths', async () => {
    const url = await serve();
    const post = (body: string) =>
      fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: auth, body });
    expect((await post('{nope')).status).toBe(400);
    const deep = `${'{"a":'.repeat(40)}1${'}'.repeat(40)}`;
    const deepAnswer = await post(deep);
    expect(deepAnswer.status).toBe(400);
    expect((await json(deepAnswer)).error.message).toContain('deeper than 32');
    const proto = await post('{"model":"default","__proto__":{"x":1},"messages":[]}');
    expect((await json(proto)).error.message).toContain('__proto__');
    const get = await fetch(`${url}/v1/chat/completions`, { headers: auth });
    expect(get.status).toBe(405);
    const unknown = await fetch(`${url}/v1/nothing`, { headers: auth });
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).error.code).toBe('unknown_url');
  });

  it('counts requests per caller and answers 429 past the limit', async () => {
    let allowed = 2;
    const url = await serve({
      createRateLimiter: () => ({ tryAcquire: () => allowed-- > 0 }),
      retryAfterSeconds: 7,
    });
    const get = () => fetch(`${url}/v1/models`, { headers: auth });
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(200);
    const limited = await get();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect((await json(limited)).error.type).toBe('rate_limit_error');
  });

  it('answers a Response cut at the output limit as incomplete, with an id carrying its session', async () => {
    const url = await serve({
      backend: backend({
        chat: async (_caller, turn) => ({
          response: 'cut',
          tokensUsed: { input: 1, output: 1, total: 2 },
          finishReason: 'length',
          sessionKey: turn.sessionKey,
        }),
      }),
    });
    const post = (body: unknown) =>
      postJson(url, '/v1/responses', body).then(
        (response) => response.json() as Promise<Record<string, unknown>>,
      );
    const first = await post({ model: 'default', input: 'hi', user: 'ann' });
    expect(first).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    });
    const next = await post({ model: 'default', input: 'more', previous_response_id: first.id });
    expect(next.agentd).toMatchObject({ sessionKey: 's:ann' });
    const streamed = await postJson(url, '/v1/responses', {
      model: 'default',
      input: 'hi',
      stream: true,
    }).then((response) => response.text());
    expect(streamed).toContain('event: response.incomplete\n');
    expect(streamed).not.toContain('[DONE]');
  });

  it('cancels the turn when a streaming client goes away', async () => {
    let aborted: Promise<void> | undefined;
    const url = await serve({
      backend: backend({
        chat: (_caller, turn) => {
          aborted = new Promise((resolve) => turn.signal.addEventListener('abort', () => resolve()));
          turn.onDelta?.('first');
          return new Promise(() => {});
        },
      }),
    });
    const controller = new AbortController();
    const response = await postJson(
      url,
      '/v1/chat/completions',
      { model: 'default', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      controller.signal,
    );
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await expect(aborted).resolves.toBeUndefined();
  });

  it('serves one model by id and embeds with float and base64 encodings', async () => {
    const url = await serve();
    const model = await fetch(`${url}/v1/models/agentd%2Fdefault`, { headers: auth });
    expect(await model.json()).toEqual({
      id: 'agentd/default',
      object: 'model',
      created: 2,
      owned_by: 'agentd',
    });
    const embed = (format: string) =>
      postJson(url, '/v1/embeddings', { model: 'm', input: 'text', encoding_format: format }).then(json);
    expect((await embed('float')).data[0]?.embedding).toEqual([0.5, -1]);
    const encoded = (await embed('base64')).data[0]?.embedding as string;
    expect(Array.from(new Float32Array(new Uint8Array(Buffer.from(encoded, 'base64')).buffer))).toEqual([
      0.5, -1,
    ]);
  });
});
