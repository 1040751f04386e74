import type { IncomingMessage, ServerResponse } from 'node:http';
import { listenLocal, parseBody, readBody } from './fake-server.js';

/** One Cloud API call the fake received. */
export interface WhatsAppCall {
  path: string;
  body: Record<string, unknown>;
}

/** A local WhatsApp Cloud API: `POST /<version>/<phone id>/messages` and `/media`, bearer auth. */
export interface FakeWhatsApp {
  /** The `apiBaseUrl` to configure. */
  url: string;
  calls: WhatsAppCall[];
  messages(): Array<Record<string, unknown>>;
  /**
   * The next `times` message posts answer `status` with a Graph error of `code`, and a
   * `Retry-After` of `retryAfter` (seconds, or an HTTP date as text) when given.
   */
  fail(status: number, code: number, options?: { times?: number; retryAfter?: number | string }): void;
  close(): Promise<void>;
}

/** Starts the fake on 127.0.0.1:0; only `token` is accepted. */
export async function startFakeWhatsApp(options: {
  token: string;
  phoneNumberId: string;
}): Promise<FakeWhatsApp> {
  const calls: WhatsAppCall[] = [];
  const failures: Array<{
    status: number;
    code: number;
    times: number;
    retryAfter?: number | string | undefined;
  }> = [];
  let next = 1;
  const answer = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    const body = await parseBody(req, await readBody(req));
    if (req.headers.authorization !== `Bearer ${options.token}`)
      return answer(res, 401, {
        error: { message: 'Invalid OAuth access token.', type: 'OAuthException', code: 190 },
      });
    const match = /^\/v[\d.]+\/(\d+)\/(messages|media)$/.exec(path);
    if (req.method !== 'POST' || !match || match[1] !== options.phoneNumberId)
      return answer(res, 404, { error: { message: 'Unknown path', code: 803 } });
    calls.push({ path: `/${match[2]}`, body });
    if (match[2] === 'media') return answer(res, 200, { id: `media-${next++}` });
    // The Cloud API's text message: `text.body` holds at most 4,096 characters; longer is
    // refused as an invalid parameter (Graph error code 100).
    const textBody = (body.text as { body?: unknown } | undefined)?.body;
    if (body.type === 'text' && typeof textBody === 'string' && [...textBody].length > 4096)
      return answer(res, 400, {
        error: {
          message: '(#100) Invalid parameter',
          type: 'OAuthException',
          code: 100,
          error_data: {
            messaging_product: 'whatsapp',
            details: "Param text['body'] must be at most 4096 characters long.",
          },
        },
      });
    const failure = failures.find((item) => item.times > 0);
    if (failure) {
      failure.times -= 1;
      return answer(
        res,
        failure.status,
        { error: { message: `fake error ${failure.code}`, type: 'OAuthException', code: failure.code } },
        failure.retryAfter !== undefined ? { 'retry-after': String(failure.retryAfter) } : {},
      );
    }
    if (body.status === 'read') return answer(res, 200, { success: true });
    return answer(res, 200, {
      messaging_product: 'whatsapp',
      contacts: [{ input: body.to, wa_id: body.to }],
      messages: [{ id: `wamid.fake${next++}` }],
    });
  };
  const server = await listenLocal((req, res) => {
    handle(req, res).catch(() => answer(res, 500, { error: { message: 'fake failed', code: 1 } }));
  });
  return {
    url: server.url,
    calls,
    messages: () => calls.filter((call) => call.path === '/messages').map((call) => call.body),
    fail(status, code, extra = {}) {
      failures.push({ status, code, times: extra.times ?? 1, retryAfter: extra.retryAfter });
    },
    close: () => server.close(),
  };
}
