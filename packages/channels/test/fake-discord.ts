import type { IncomingMessage, ServerResponse } from 'node:http';
import { type WebSocket, WebSocketServer } from 'ws';
import { type FakeApi, listenLocal, parseBody, readBody } from './fake-server.js';

/** One REST call the fake received. */
export interface DiscordCall {
  method: string;
  path: string;
  body: Record<string, unknown>;
  /** When it arrived (epoch ms). */
  at: number;
}

/**
 * A local Discord REST API under `/api/v10`, with `nonce` + `enforce_nonce` deduplication as
 * Discord does it; `url` ends in `/api`, `of` picks the calls whose `METHOD path` matches.
 */
export interface FakeDiscord extends FakeApi<DiscordCall, RegExp> {
  /** The next `times` calls matching `pattern` answer `status` (429 with `retry_after` seconds). */
  fail(pattern: RegExp, status: number, options?: { times?: number; retryAfter?: number }): void;
  /** Messages actually created, per channel. */
  created(channel: string): Array<Record<string, unknown>>;
  /** The Gateway URL (`ws://…/gateway`), speaking HELLO, IDENTIFY, READY, heartbeats and RESUME. */
  gatewayUrl: string;
  /** IDENTIFY and RESUME payloads received, in order. */
  handshakes: Array<{ op: number; d: Record<string, unknown> }>;
  /** Sends `MESSAGE_CREATE` to every connected, identified session. */
  dispatchMessage(data: Record<string, unknown>): void;
  /**
   * Sends `MESSAGE_REACTION_ADD` to each identified session whose intents include
   * GUILD_MESSAGE_REACTIONS (1 << 10), as Discord sends an event only to the intents that cover it.
   */
  dispatchReaction(data: Record<string, unknown>): void;
  /** Drops every Gateway connection (as a Discord outage would); clients must reconnect. */
  dropConnections(code?: number): void;
  /**
   * The first call matching `pattern` is carried out (the message is created) but never
   * answered: a crash between Discord's commit and the client reading the answer.
   */
  holdOnce(pattern: RegExp): void;
  /** Open, identified Gateway sessions. */
  sessions(): number;
  /**
   * From now on message POSTs are received but neither carried out nor answered, as a platform
   * that has stopped responding (each client waits for its answer; Discord's own timeout ends it).
   */
  stall(): void;
  /** POSTs received while stalled, not yet answered. */
  stalled(): number;
  /** Carries out the stalled POSTs in arrival order (their messages are created) without answering them. */
  carryOutStalled(): void;
  /** Carries out what is still stalled, answers every stalled POST, and serves the next ones at once. */
  unstall(): void;
  /**
   * How many times a message POST arrived while another POST to the same channel was still being
   * served (only possible with `latencyMs`): two senders in one chat at once.
   */
  overlaps(): number;
}

/** Starts the fake on 127.0.0.1:0; only `Bot <token>` is accepted. */
export async function startFakeDiscord(options: {
  token: string;
  /** How long each message POST takes to be served, as a loaded platform would. @default 0 */
  latencyMs?: number;
}): Promise<FakeDiscord> {
  const calls: DiscordCall[] = [];
  const failures: Array<{ pattern: RegExp; status: number; times: number; retryAfter?: number | undefined }> =
    [];
  const channels = new Map<string, Array<Record<string, unknown>>>();
  const nonces = new Map<string, Record<string, unknown>>();
  let nextId = 10_000_000_000_000_000n;
  let hold: RegExp | undefined;
  const held: ServerResponse[] = [];
  let stalling = false;
  const serving = new Set<string>();
  let overlaps = 0;
  const stalledPosts: Array<{
    res: ServerResponse;
    request: [string, string, Record<string, unknown>];
    outcome?: [number, unknown];
  }> = [];
  const carryOut = () => {
    for (const post of stalledPosts) post.outcome ??= route(...post.request);
  };

  const answer = (
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) => {
    if (status === 204) return res.writeHead(204).end();
    return res
      .writeHead(status, { 'content-type': 'application/json', ...headers })
      .end(JSON.stringify(body));
  };
  const list = (channel: string) => {
    const found = channels.get(channel) ?? [];
    channels.set(channel, found);
    return found;
  };

  const route = (method: string, path: string, body: Record<string, unknown>): [number, unknown] => {
    const tooLong = contentRefusal(method, path, body);
    if (tooLong) return [400, tooLong];
    let m = /^\/channels\/(\d+)\/messages$/.exec(path);
    if (m?.[1] && method === 'POST') {
      const nonce = body.nonce === undefined ? undefined : `${m[1]}:${String(body.nonce)}`;
      const existing = nonce && body.enforce_nonce ? nonces.get(nonce) : undefined;
      if (existing) return [200, existing];
      const message = {
        id: String(nextId++),
        channel_id: m[1],
        content: body.content ?? '',
        nonce: body.nonce,
        attachments: body.files ?? [],
        message_reference: body.message_reference,
        timestamp: new Date().toISOString(),
        author: { id: '1', bot: true },
      };
      list(m[1]).push(message);
      if (nonce) nonces.set(nonce, message);
      return [200, message];
    }
    if (m?.[1] && method === 'GET') return [200, [...list(m[1])].reverse()];
    m = /^\/channels\/(\d+)\/messages\/(\d+)$/.exec(path);
    if (m?.[1] && method === 'PATCH') return [200, { id: m[2], channel_id: m[1], content: body.content }];
    if (m?.[1] && method === 'DELETE') return [204, null];
    if (/^\/channels\/\d+\/messages\/\d+\/reactions\/[^/]+\/@me$/.test(path) && method === 'PUT')
      return [204, null];
    if (/^\/channels\/\d+\/pins\/\d+$/.test(path) && method === 'PUT') return [204, null];
    m = /^\/channels\/(\d+)(?:\/messages\/\d+)?\/threads$/.exec(path);
    if (m?.[1] && method === 'POST') return [201, { id: String(nextId++), name: body.name, parent_id: m[1] }];
    m = /^\/channels\/(\d+)$/.exec(path);
    if (m?.[1] && method === 'GET') return [200, { id: m[1], type: 0, name: 'general' }];
    return [404, { message: 'Unknown route', code: 0 }];
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const [full = '', query] = (req.url ?? '').split('?');
    const method = req.method ?? 'GET';
    if (full === '/api/v10/gateway/bot')
      return answer(res, 200, {
        url: gatewayUrl,
        shards: 1,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
      });
    if (!full.startsWith('/api/v10/')) return answer(res, 404, { message: '404: Not Found', code: 0 });
    const path = full.slice('/api/v10'.length);
    if (req.headers.authorization !== `Bot ${options.token}`)
      return answer(res, 401, { message: '401: Unauthorized', code: 0 });
    let body = await parseBody(req, await readBody(req));
    // A message with files arrives as multipart: the JSON is in `payload_json`, files beside it.
    if (typeof body.payload_json === 'object' && body.payload_json !== null) {
      const files = Object.entries(body)
        .filter(([key]) => key.startsWith('files['))
        .map(([, value]) => value);
      body = { ...(body.payload_json as Record<string, unknown>), files };
    }
    calls.push({ method, path: query ? `${path}?${query}` : path, body, at: Date.now() });
    const failure = failures.find((item) => item.times > 0 && item.pattern.test(`${method} ${path}`));
    if (failure) {
      failure.times -= 1;
      if (failure.status === 429) {
        const after = failure.retryAfter ?? 1;
        return answer(
          res,
          429,
          { message: 'You are being rate limited.', retry_after: after, global: false },
          { 'retry-after': String(after), 'x-ratelimit-scope': 'user' },
        );
      }
      return answer(res, failure.status, {
        message: `fake ${failure.status}`,
        code: failure.status === 400 ? 50035 : 0,
      });
    }
    const post = method === 'POST' && /^\/channels\/\d+\/messages$/.test(path);
    if (stalling && post) {
      stalledPosts.push({ res, request: [method, path, body] });
      return;
    }
    if (post && options.latencyMs) {
      if (serving.has(path)) overlaps += 1;
      serving.add(path);
      await new Promise((resolve) => setTimeout(resolve, options.latencyMs));
      serving.delete(path);
    }
    const [status, result] = route(method, path, body);
    if (hold?.test(`${method} ${path}`)) {
      hold = undefined;
      held.push(res);
      return;
    }
    return answer(res, status, result);
  };

  const server = await listenLocal((req, res) => {
    handle(req, res).catch(() => answer(res, 500, { message: 'fake failed', code: 0 }));
  });
  const gatewayUrl = `${server.url.replace('http', 'ws')}/gateway`;
  const handshakes: Array<{ op: number; d: Record<string, unknown> }> = [];
  const identified = new Set<WebSocket>();
  const intentsOf = new Map<WebSocket, number>();
  let sequence = 0;
  const wss = new WebSocketServer({ server: server.server, path: '/gateway' });
  wss.on('connection', (socket) => {
    const send = (payload: Record<string, unknown>) => socket.send(JSON.stringify(payload));
    send({ op: 10, d: { heartbeat_interval: 45_000 }, s: null, t: null });
    socket.on('message', (raw) => {
      const payload = JSON.parse(String(raw)) as { op: number; d: Record<string, unknown> };
      if (payload.op === 1) return send({ op: 11, d: null, s: null, t: null });
      if (payload.op === 2 || payload.op === 6) {
        handshakes.push(payload);
        if (payload.d.token !== options.token) return socket.close(4004, 'Authentication failed.');
        identified.add(socket);
        if (payload.op === 2) intentsOf.set(socket, Number(payload.d.intents ?? 0));
        if (payload.op === 6) return send({ op: 0, t: 'RESUMED', s: ++sequence, d: {} });
        return send({
          op: 0,
          t: 'READY',
          s: ++sequence,
          d: {
            v: 10,
            user: { id: '1', username: 'fake', discriminator: '0', avatar: null, bot: true },
            guilds: [],
            session_id: `session-${handshakes.length}`,
            resume_gateway_url: gatewayUrl,
            application: { id: '1', flags: 0 },
          },
        });
      }
    });
    socket.on('close', () => identified.delete(socket));
  });
  return {
    gatewayUrl,
    handshakes,
    stall() {
      stalling = true;
    },
    stalled: () => stalledPosts.length,
    overlaps: () => overlaps,
    carryOutStalled: carryOut,
    unstall() {
      stalling = false;
      carryOut();
      // A client that died meanwhile no longer reads its answer; the others get theirs.
      for (const post of stalledPosts.splice(0)) {
        const [status, result] = post.outcome ?? [500, { message: 'fake failed', code: 0 }];
        if (!post.res.destroyed) answer(post.res, status, result);
      }
    },
    dispatchMessage(data) {
      for (const socket of identified)
        socket.send(JSON.stringify({ op: 0, t: 'MESSAGE_CREATE', s: ++sequence, d: data }));
    },
    dispatchReaction(data) {
      for (const socket of identified)
        if (((intentsOf.get(socket) ?? 0) & (1 << 10)) !== 0)
          socket.send(JSON.stringify({ op: 0, t: 'MESSAGE_REACTION_ADD', s: ++sequence, d: data }));
    },
    dropConnections(code = 4000) {
      for (const socket of wss.clients) socket.close(code, 'fake outage');
    },
    holdOnce(pattern) {
      hold = pattern;
    },
    sessions: () => identified.size,
    url: `${server.url}/api`,
    calls,
    of: (pattern) => calls.filter((call) => pattern.test(`${call.method} ${call.path}`)),
    fail(pattern, status, extra = {}) {
      failures.push({ pattern, status, times: extra.times ?? 1, retryAfter: extra.retryAfter });
    },
    created: (channel) => list(channel),
    close: async () => {
      for (const res of held.splice(0)) res.destroy();
      for (const socket of wss.clients) socket.terminate();
      await new Promise((resolve) => wss.close(resolve));
      await server.close();
    },
  };
}

/**
 * Discord's refusal of a message `content` over 2,000 characters (Create Message, Edit Message:
 * "up to 2000 characters"), as its REST API answers it: 400, code 50035 "Invalid Form Body",
 * the field's `BASE_TYPE_MAX_LENGTH` error. Characters are Unicode code points.
 */
function contentRefusal(method: string, path: string, body: Record<string, unknown>) {
  if (!/^\/channels\/\d+\/messages(?:\/\d+)?$/.test(path) || (method !== 'POST' && method !== 'PATCH'))
    return undefined;
  if (typeof body.content !== 'string' || [...body.content].length <= 2000) return undefined;
  return {
    message: 'Invalid Form Body',
    code: 50035,
    errors: {
      content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] },
    },
  };
}
