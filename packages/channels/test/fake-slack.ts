import type { IncomingMessage, ServerResponse } from 'node:http';
import { type FakeApi, listenLocal, parseBody, readBody } from './fake-server.js';
import { type FakeSocketMode, startFakeSocketMode } from './fake-slack-socket.js';

/** One Web API call the fake received. */
export interface SlackCall {
  method: string;
  params: Record<string, unknown>;
}

/**
 * A local Slack Web API: `POST /api/<method>` with bearer auth, form or JSON bodies, `{ok, …}`
 * answers; `url` ends in `/api`, `of` picks the calls of one method.
 */
export interface FakeSlack extends FakeApi<SlackCall, string> {
  /** The next `times` calls of `method` answer `{ok:false, error}` (or HTTP 429 with Retry-After for `ratelimited`). */
  fail(method: string, error: string, options?: { times?: number; retryAfter?: number }): void;
  /** Messages posted to a channel, oldest first, as the fake stored them. */
  posted(channel: string): Array<Record<string, unknown>>;
  /** The first call of `method` is carried out (the message stored) but never answered. */
  holdOnce(method: string): void;
  /** Socket Mode: the connections `apps.connections.open` (with the app-level token) hands out. */
  socketMode: FakeSocketMode;
}

/** Starts the fake Web API on 127.0.0.1:0; only `token` is accepted. */
export async function startFakeSlack(options: { token: string; appToken?: string }): Promise<FakeSlack> {
  const calls: SlackCall[] = [];
  const failures = new Map<string, { error: string; times: number; retryAfter?: number | undefined }>();
  const channels = new Map<string, Array<Record<string, unknown>>>();
  let clock = 1_700_000_000;
  let base = '';
  let hold: string | undefined;
  const held: ServerResponse[] = [];

  const answer = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  const list = (channel: string) => {
    const found = channels.get(channel) ?? [];
    channels.set(channel, found);
    return found;
  };

  const results: Record<string, (p: Record<string, unknown>) => Record<string, unknown>> = {
    'chat.postMessage': (p) => {
      const ts = `${clock++}.000100`;
      const message = {
        type: 'message',
        ts,
        text: p.text,
        user: 'UBOT',
        thread_ts: p.thread_ts,
        metadata: p.metadata,
      };
      list(String(p.channel)).push(message);
      return { channel: p.channel, ts, message };
    },
    'chat.update': (p) => ({ channel: p.channel, ts: p.ts, text: p.text }),
    'chat.delete': (p) => ({ channel: p.channel, ts: p.ts }),
    'reactions.add': () => ({}),
    'pins.add': () => ({}),
    'pins.remove': () => ({}),
    'conversations.setTopic': (p) => ({ channel: { id: p.channel, topic: { value: p.topic } } }),
    'users.info': (p) => ({ user: { id: p.user, name: 'someone' } }),
    'conversations.history': (p) => ({
      messages: [...list(String(p.channel))]
        .reverse()
        .slice(0, Number(p.limit ?? 100))
        .map((message) => (p.include_all_metadata ? message : { ...message, metadata: undefined })),
    }),
    'files.getUploadURLExternal': (p) => ({
      upload_url: `${base}/upload/F${clock}`,
      file_id: `F${clock++}`,
      filename: p.filename,
    }),
    'files.completeUploadExternal': (p) => ({ files: p.files }),
    'apps.connections.open': () => socketMode.open(),
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    const body = await readBody(req);
    if (path.startsWith('/upload/')) {
      calls.push({ method: 'upload', params: { path, body: body.toString('utf8') } });
      return res.writeHead(200, { 'content-type': 'text/plain' }).end('OK - 1');
    }
    const match = /^\/api\/([A-Za-z.]+)$/.exec(path);
    if (!match?.[1]) return answer(res, 404, { ok: false, error: 'unknown_method' });
    const method = match[1];
    const params = await parseBody(req, body);
    // apps.connections.open takes only the app-level token, every other method the bot token.
    const socketOpen = method === 'apps.connections.open';
    const expected = socketOpen ? options.appToken : options.token;
    if (!expected || req.headers.authorization !== `Bearer ${expected}`) {
      const botTokenForSocket = socketOpen && req.headers.authorization === `Bearer ${options.token}`;
      return answer(res, 200, {
        ok: false,
        error: botTokenForSocket ? 'not_allowed_token_type' : 'invalid_auth',
      });
    }
    calls.push({ method, params });
    const failure = failures.get(method);
    if (failure && failure.times > 0) {
      failure.times -= 1;
      if (failure.error === 'ratelimited')
        return answer(
          res,
          429,
          { ok: false, error: 'ratelimited' },
          { 'retry-after': String(failure.retryAfter ?? 1) },
        );
      return answer(res, 200, { ok: false, error: failure.error });
    }
    // chat.postMessage and chat.update: Slack truncates text past 40,000 characters and names
    // the error `msg_too_long`; the fake refuses it rather than truncating.
    if (
      (method === 'chat.postMessage' || method === 'chat.update') &&
      String(params.text ?? '').length > 40_000
    )
      return answer(res, 200, { ok: false, error: 'msg_too_long' });
    const result = results[method];
    if (!result) return answer(res, 200, { ok: false, error: 'unknown_method' });
    const answered = { ok: true, ...result(params) };
    if (hold === method) {
      hold = undefined;
      held.push(res);
      return;
    }
    return answer(res, 200, answered);
  };

  const server = await listenLocal((req, res) => {
    handle(req, res).catch(() => answer(res, 500, { ok: false, error: 'fatal_error' }));
  });
  base = server.url;
  const socketMode = startFakeSocketMode(server.server, server.url);
  return {
    socketMode,
    url: `${server.url}/api`,
    calls,
    of: (method) => calls.filter((call) => call.method === method),
    fail(method, error, extra = {}) {
      failures.set(method, { error, times: extra.times ?? 1, retryAfter: extra.retryAfter });
    },
    posted: (channel) => list(channel),
    holdOnce(method) {
      hold = method;
    },
    close: async () => {
      for (const res of held.splice(0)) res.destroy();
      await socketMode.close();
      await server.close();
    },
  };
}
