import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a fake provider answers to one request. */
export interface FakeReply {
  text?: string;
  toolCalls?: Array<{ id: string; name: string; input: unknown }>;
  /** `stop`, `tool_calls` or `length` (mapped to each wire format's own names). */
  finishReason?: 'stop' | 'tool_calls' | 'length';
  usage?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
  /** Pause between SSE chunks. */
  chunkDelayMs?: number;
  /** Send headers, then nothing for this long (stall and cancellation tests). */
  hangMs?: number;
  /** Send headers, then nothing until this settles (a turn held in flight while a test acts). */
  hold?: Promise<unknown>;
}

/** A scripted HTTP failure answered instead of a reply. */
export interface FakeFailure {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** One request the fake received. */
export interface FakeRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown> | undefined;
}

/** A running fake provider. */
export interface FakeProvider {
  /** Base URL to configure (`http://127.0.0.1:<port>/v1`). */
  url: string;
  requests: FakeRequest[];
  /** Failures answered, in order, before replies resume. */
  failures: FakeFailure[];
  /** Connections currently open (to observe cancellation). */
  openConnections(): number;
  /** Resolves when a request's connection was closed by the client before the reply ended. */
  aborted: Promise<void>;
  close(): Promise<void>;
}

/** Options of the fake servers. */
export interface FakeOptions {
  /** Required key; requests without it get 401. */
  apiKey: string;
  /** Builds the reply from the request body. @default a text reply echoing the last user message */
  respond?: (body: Record<string, unknown>, index: number) => FakeReply;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function readBody(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
}

function lastUserText(body: Record<string, unknown>): string {
  const messages = (body.messages as Array<{ role: string; content: unknown }>) ?? [];
  const last = [...messages].reverse().find((message) => message.role === 'user');
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  return (last.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('');
}

function splitText(text: string): string[] {
  return text.match(/.{1,5}/gs) ?? [];
}

async function startServer(
  handle: (
    req: IncomingMessage,
    res: ServerResponse,
    body: Record<string, unknown> | undefined,
  ) => Promise<void>,
  state: { requests: FakeRequest[]; failures: FakeFailure[] },
): Promise<FakeProvider> {
  let open = 0;
  let markAborted: () => void = () => {};
  const aborted = new Promise<void>((resolve) => {
    markAborted = resolve;
  });
  const server: Server = createServer((req, res) => {
    open++;
    res.on('close', () => {
      open--;
      if (!res.writableFinished) markAborted();
    });
    void (async () => {
      const body = await readBody(req);
      state.requests.push({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body });
      const failure = state.failures.shift();
      if (failure) {
        res.writeHead(failure.status, { 'content-type': 'application/json', ...(failure.headers ?? {}) });
        res.end(JSON.stringify(failure.body));
        return;
      }
      await handle(req, res, body);
    })().catch((error: unknown) => {
      res.destroy(error as Error);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests: state.requests,
    failures: state.failures,
    openConnections: () => open,
    aborted,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function sseHeaders(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
}

/**
 * A fake OpenAI-compatible Chat Completions server: `POST /v1/chat/completions` streaming
 * `chat.completion.chunk` SSE lines ending in `data: [DONE]` (usage in a final chunk when
 * `stream_options.include_usage` is set), and `GET /v1/models`.
 */
export async function startFakeOpenAi(options: FakeOptions): Promise<FakeProvider> {
  const state = { requests: [] as FakeRequest[], failures: [] as FakeFailure[] };
  let index = 0;
  return startServer(async (req, res, body) => {
    if (req.headers.authorization !== `Bearer ${options.apiKey}`) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: {
            message: `Incorrect API key provided: ${String(req.headers.authorization).slice(7)}`,
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          },
        }),
      );
      return;
    }
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ object: 'list', data: [{ id: 'gpt-fake', object: 'model', owned_by: 'test' }] }),
      );
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions' || !body) {
      res.writeHead(404).end();
      return;
    }
    const reply = options.respond?.(body, index++) ?? { text: `echo: ${lastUserText(body)}` };
    const model = String(body.model);
    const created = 1_700_000_000;
    const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
      id: 'chatcmpl-fake',
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    if (body.stream !== true) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'this fake only streams' } }));
      return;
    }
    sseHeaders(res);
    const write = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
    if (reply.hangMs) await sleep(reply.hangMs);
    if (reply.hold) await reply.hold.catch(() => undefined);
    if (res.destroyed) return;
    write(chunk({ role: 'assistant', content: '' }, null));
    for (const piece of splitText(reply.text ?? '')) {
      if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
      if (res.destroyed) return;
      write(chunk({ content: piece }, null));
    }
    (reply.toolCalls ?? []).forEach((call, callIndex) => {
      const args = JSON.stringify(call.input);
      write(
        chunk(
          {
            tool_calls: [
              {
                index: callIndex,
                id: call.id,
                type: 'function',
                function: { name: call.name, arguments: '' },
              },
            ],
          },
          null,
        ),
      );
      const half = Math.ceil(args.length / 2);
      for (const part of [args.slice(0, half), args.slice(half)]) {
        write(chunk({ tool_calls: [{ index: callIndex, function: { arguments: part } }] }, null));
      }
    });
    const finish = reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
    write(chunk({}, finish));
    const usage = reply.usage ?? { input: 12, output: 7 };
    const streamOptions = body.stream_options as { include_usage?: boolean } | undefined;
    if (streamOptions?.include_usage) {
      write({
        id: 'chatcmpl-fake',
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [],
        usage: {
          prompt_tokens: usage.input,
          completion_tokens: usage.output,
          total_tokens: usage.input + usage.output,
          prompt_tokens_details: { cached_tokens: usage.cacheRead ?? 0 },
        },
      });
    }
    res.end('data: [DONE]\n\n');
  }, state);
}

/**
 * A fake Anthropic Messages server: `POST /v1/messages` streaming the named SSE events
 * (`message_start`, `content_block_start/delta/stop`, `ping`, `message_delta`,
 * `message_stop`) with cache token usage, and `GET /v1/models`.
 */
export async function startFakeAnthropic(options: FakeOptions): Promise<FakeProvider> {
  const state = { requests: [] as FakeRequest[], failures: [] as FakeFailure[] };
  let index = 0;
  return startServer(async (req, res, body) => {
    if (req.headers['x-api-key'] !== options.apiKey) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          type: 'error',
          error: { type: 'authentication_error', message: 'invalid x-api-key' },
        }),
      );
      return;
    }
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: [{ id: 'claude-fake', type: 'model' }], has_more: false }));
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/messages' || !body) {
      res.writeHead(404).end();
      return;
    }
    const reply = options.respond?.(body, index++) ?? { text: `echo: ${lastUserText(body)}` };
    const usage = reply.usage ?? { input: 20, output: 9 };
    sseHeaders(res);
    const send = (event: string, data: Record<string, unknown>) =>
      res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
    if (reply.hangMs) await sleep(reply.hangMs);
    send('message_start', {
      message: {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input,
          output_tokens: 1,
          cache_creation_input_tokens: usage.cacheWrite ?? 0,
          cache_read_input_tokens: usage.cacheRead ?? 0,
        },
      },
    });
    let block = 0;
    if (reply.text) {
      send('content_block_start', { index: block, content_block: { type: 'text', text: '' } });
      send('ping', {});
      for (const piece of splitText(reply.text)) {
        if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
        if (res.destroyed) return;
        send('content_block_delta', { index: block, delta: { type: 'text_delta', text: piece } });
      }
      send('content_block_stop', { index: block });
      block++;
    }
    for (const call of reply.toolCalls ?? []) {
      send('content_block_start', {
        index: block,
        content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
      });
      const args = JSON.stringify(call.input);
      const half = Math.ceil(args.length / 2);
      for (const part of [args.slice(0, half), args.slice(half)]) {
        send('content_block_delta', {
          index: block,
          delta: { type: 'input_json_delta', partial_json: part },
        });
      }
      send('content_block_stop', { index: block });
      block++;
    }
    const finish = reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
    const stopReason = finish === 'tool_calls' ? 'tool_use' : finish === 'length' ? 'max_tokens' : 'end_turn';
    send('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output },
    });
    send('message_stop', {});
    res.end();
  }, state);
}
