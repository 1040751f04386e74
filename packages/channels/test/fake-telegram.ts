import type { IncomingMessage, ServerResponse } from 'node:http';
import { type FakeApi, type Failure, listenLocal, parseBody, readBody } from './fake-server.js';

/** One Bot API call the fake received. */
export interface TelegramCall {
  method: string;
  token: string;
  params: Record<string, unknown>;
}

/**
 * A local Bot API server: `/bot<token>/<method>` with the real request and answer shapes;
 * `of` picks the calls of one method.
 */
export interface FakeTelegram extends FakeApi<TelegramCall, string> {
  /** The next `times` calls of `method` answer `{ok:false, error_code, description, parameters}`. */
  fail(
    method: string,
    errorCode: number,
    description: string,
    options?: { retryAfter?: number; times?: number },
  ): void;
  /** Calls for which `match` answers true are received and recorded but never answered. */
  hold(match: (call: TelegramCall) => boolean): void;
  /** Updates `getUpdates` would still serve (not confirmed by a higher offset). */
  pending(): number;
  /**
   * How many long polls were ended with 409 because another `getUpdates` arrived while they
   * waited, as the Bot API does when two instances poll one bot.
   */
  conflicts(): number;
  /** Queues an update for `getUpdates`. */
  pushUpdate(update: Record<string, unknown>): void;
  /** The `allowed_updates` the last `getUpdates` that gave one asked for (the Bot API remembers it). */
  allowedUpdates(): string[] | undefined;
  /** The webhook `setWebhook` registered (`deleteWebhook` clears it), as `getWebhookInfo` reports it. */
  webhook(): { url: string; secretToken?: string | undefined } | undefined;
  /**
   * Posts an update to the registered webhook as Telegram does (JSON body, the
   * `X-Telegram-Bot-Api-Secret-Token` header when a secret was set) and answers the HTTP status.
   * `secretToken` overrides the header's value; `null` leaves the header off.
   */
  postUpdate(update: Record<string, unknown>, secretToken?: string | null): Promise<number>;
}

/** An update carrying a person's text message in a group chat, as the Bot API delivers it. */
export function groupMessage(messageId: number, chatId: number, fromId: number, text: string) {
  return {
    message: {
      message_id: messageId,
      date: 1,
      chat: { id: chatId, type: 'group' },
      from: { id: fromId, is_bot: false, first_name: `user ${fromId}` },
      text,
    },
  };
}

/** Starts the fake Bot API on 127.0.0.1:0. */
export async function startFakeTelegram(options: { token?: string } = {}): Promise<FakeTelegram> {
  const calls: TelegramCall[] = [];
  const failures = new Map<string, Failure>();
  const held: ServerResponse[] = [];
  const updates: Array<Record<string, unknown>> = [];
  let allowedUpdates: string[] | undefined;
  const pollers: Array<() => void> = [];
  /** Each waiting long poll's way to be ended by a newer one. */
  const terminators = new Map<() => void, () => void>();
  let conflicts = 0;
  let holdMatch: ((call: TelegramCall) => boolean) | undefined;
  let nextMessageId = 1000;
  let nextUpdateId = 1;
  let webhook: { url: string; secretToken?: string | undefined } | undefined;

  const answer = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

  const results: Record<string, (params: Record<string, unknown>) => unknown> = {
    getMe: () => ({ id: 42, is_bot: true, first_name: 'fake', username: 'fake_bot' }),
    deleteWebhook: () => {
      webhook = undefined;
      return true;
    },
    setWebhook: (params) => {
      webhook = {
        url: String(params.url),
        ...(params.secret_token === undefined ? {} : { secretToken: String(params.secret_token) }),
      };
      return true;
    },
    getWebhookInfo: () => ({ url: webhook?.url ?? '', pending_update_count: 0 }),
    sendMessage: (params) => message(params, { text: params.text }),
    sendDocument: (params) => message(params, { document: params.document, caption: params.caption }),
    sendPoll: (params) => message(params, { poll: { question: params.question } }),
    editMessageText: (params) =>
      message({ ...params }, { text: params.text, message_id: Number(params.message_id) }),
    deleteMessage: () => true,
    setMessageReaction: () => true,
    pinChatMessage: () => true,
    unpinChatMessage: () => true,
    getChat: (params) => ({ id: Number(params.chat_id), type: 'group', title: 'fake chat' }),
  };
  function message(params: Record<string, unknown>, extra: Record<string, unknown>) {
    return {
      message_id: nextMessageId++,
      date: Math.floor(Date.now() / 1000),
      chat: { id: Number(params.chat_id), type: 'private' },
      ...extra,
    };
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec((req.url ?? '').split('?')[0] ?? '');
    if (!match) return answer(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    const [, token = '', method = ''] = match;
    const params = await parseBody(req, await readBody(req));
    // As the Bot API does: `attach://<name>` names the multipart part that holds the file.
    for (const [key, value] of Object.entries(params)) {
      if (typeof value === 'string' && value.startsWith('attach://')) {
        const part = value.slice('attach://'.length);
        params[key] = params[part];
        delete params[part];
      }
    }
    if (options.token && token !== options.token)
      return answer(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
    // As the Bot API does: long polling and a webhook exclude each other.
    if (method === 'getUpdates' && webhook)
      return answer(res, 409, {
        ok: false,
        error_code: 409,
        description: "Conflict: can't use getUpdates method while webhook is active",
      });
    if (method === 'getUpdates') {
      // As the Bot API does: a newer getUpdates ends the one still waiting with 409.
      for (const terminate of [...terminators.values()]) terminate();
      return poll(res, params);
    }
    const call = { method, token, params };
    calls.push(call);
    if (holdMatch?.(call)) {
      held.push(res);
      return;
    }
    const failure = failures.get(method);
    if (failure && failure.times > 0) {
      failure.times -= 1;
      return answer(res, failure.status, failure.body);
    }
    const refused = textRefusal(method, params);
    if (refused)
      return answer(res, 400, { ok: false, error_code: 400, description: `Bad Request: ${refused}` });
    const result = results[method];
    if (!result)
      return answer(res, 404, { ok: false, error_code: 404, description: 'Not Found: method not found' });
    return answer(res, 200, { ok: true, result: result(params) });
  };

  // Long polling as the Bot API does it: answers at once when updates wait, else within `timeout`
  // (held to one second here so a stopping bot is not kept waiting).
  const poll = (res: ServerResponse, params: Record<string, unknown>) => {
    const offset = Number(params.offset ?? 0);
    // As the Bot API does: an update is served again by every getUpdates until one with a
    // higher offset confirms it, and a confirmed update is forgotten for good.
    if (offset > 0)
      for (let at = updates.length - 1; at >= 0; at--)
        if (Number(updates[at]?.update_id) < offset) updates.splice(at, 1);
    // As the Bot API does: `allowed_updates` is remembered from the last call that gave it, and
    // without it `message_reaction` updates are not sent.
    if (Array.isArray(params.allowed_updates)) allowedUpdates = params.allowed_updates.map(String);
    const wanted = (update: Record<string, unknown>) =>
      !('message_reaction' in update) || (allowedUpdates ?? []).includes('message_reaction');
    const pending = () => updates.filter((update) => Number(update.update_id) >= offset && wanted(update));
    const send = () => answer(res, 200, { ok: true, result: pending() });
    if (pending().length > 0 || Number(params.timeout ?? 0) === 0) return send();
    const forget = () => {
      const index = pollers.indexOf(wake);
      if (index >= 0) pollers.splice(index, 1);
      terminators.delete(wake);
    };
    const timer = setTimeout(() => {
      forget();
      send();
    }, 1000);
    const wake = () => {
      clearTimeout(timer);
      terminators.delete(wake);
      send();
    };
    pollers.push(wake);
    terminators.set(wake, () => {
      clearTimeout(timer);
      forget();
      conflicts++;
      answer(res, 409, {
        ok: false,
        error_code: 409,
        description:
          'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
      });
    });
  };

  const server = await listenLocal((req, res) => {
    handle(req, res).catch(() =>
      answer(res, 500, { ok: false, error_code: 500, description: 'fake failed' }),
    );
  });
  return {
    url: server.url,
    calls,
    of: (method) => calls.filter((call) => call.method === method),
    fail(method, errorCode, description, extra = {}) {
      failures.set(method, {
        status: errorCode,
        times: extra.times ?? 1,
        body: {
          ok: false,
          error_code: errorCode,
          description,
          ...(extra.retryAfter !== undefined ? { parameters: { retry_after: extra.retryAfter } } : {}),
        },
      });
    },
    hold(match) {
      holdMatch = match;
    },
    allowedUpdates: () => allowedUpdates,
    pending: () => updates.length,
    conflicts: () => conflicts,
    pushUpdate(update) {
      updates.push({ update_id: nextUpdateId++, ...update });
      for (const wake of pollers.splice(0)) wake();
    },
    webhook: () => webhook,
    async postUpdate(update, secretToken = webhook?.secretToken ?? null) {
      if (!webhook) throw new Error('no webhook is set');
      const response = await fetch(webhook.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(secretToken === null ? {} : { 'x-telegram-bot-api-secret-token': secretToken }),
        },
        body: JSON.stringify({ update_id: nextUpdateId++, ...update }),
      });
      await response.arrayBuffer();
      return response.status;
    },
    async close() {
      for (const res of held.splice(0)) res.destroy();
      for (const wake of pollers.splice(0)) wake();
      await server.close();
    },
  };
}

/**
 * What the Bot API refuses in a message's text (https://core.telegram.org/bots/api#sendmessage,
 * #formatting-options): 1-4096 characters after entity parsing, counted in UTF-16 code units;
 * with `parse_mode: MarkdownV2`, malformed markup is "can't parse entities".
 */
function textRefusal(method: string, params: Record<string, unknown>): string | undefined {
  if (method !== 'sendMessage' && method !== 'editMessageText') return undefined;
  const text = String(params.text ?? '');
  let visible = text;
  if (params.parse_mode === 'MarkdownV2') {
    const parsed = parseMarkdownV2(text);
    if (typeof parsed !== 'string') return `can't parse entities: ${parsed.error}`;
    visible = parsed;
  }
  if (visible.trim().length === 0) return 'message text is empty';
  if (visible.length > 4096) return 'message is too long';
  return undefined;
}

/** Characters MarkdownV2 reserves outside entities: each must be escaped with a preceding `\`. */
const RESERVED = new Set([...'_*[]()~`>#+-=|{}.!']);

/**
 * A MarkdownV2 reader as the formatting options describe it: `\` escapes any ASCII character;
 * `*bold*`, `_italic_`, `__underline__`, `~strike~`, `||spoiler||` must close; `` `code` `` and
 * fenced pre blocks run to their closing backticks; `[text](url)` links; `>` opens a quote at a
 * line start; any other reserved character unescaped is refused. Answers the visible text.
 */
function parseMarkdownV2(text: string): string | { error: string } {
  const open: string[] = [];
  let out = '';
  for (let at = 0; at < text.length; at++) {
    const char = text[at] as string;
    if (char === '\\') {
      const next = text.charCodeAt(at + 1);
      if (!(next >= 1 && next <= 126))
        return { error: `Character '\\' is reserved and must be escaped with the preceding '\\'` };
      out += text[at + 1];
      at++;
      continue;
    }
    if (char === '`') {
      const fence = text.startsWith('```', at) ? '```' : '`';
      const end = text.indexOf(fence, at + fence.length);
      if (end < 0) return { error: `Can't find end of the entity starting at byte offset ${at}` };
      out += text.slice(at + fence.length, end);
      at = end + fence.length - 1;
      continue;
    }
    const marker = text.startsWith('__', at) ? '__' : text.startsWith('||', at) ? '||' : char;
    if (marker === '__' || marker === '||' || marker === '*' || marker === '_' || marker === '~') {
      if (open.at(-1) === marker) open.pop();
      else open.push(marker);
      at += marker.length - 1;
      continue;
    }
    if (char === '[') {
      const close = text.indexOf('](', at);
      const end = close < 0 ? -1 : text.indexOf(')', close);
      if (end < 0) return { error: `Can't find end of the entity starting at byte offset ${at}` };
      out += text.slice(at + 1, close);
      at = end;
      continue;
    }
    if (char === '>' && (at === 0 || text[at - 1] === '\n')) continue;
    if (RESERVED.has(char))
      return { error: `Character '${char}' is reserved and must be escaped with the preceding '\\'` };
    out += char;
  }
  if (open.length > 0) return { error: "Can't find end of the entity starting at byte offset 0" };
  return out;
}
