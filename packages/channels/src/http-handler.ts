import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChannelsService } from './service.js';

/** The `/channels/<platform>/…` routes of a node:http server. */
export interface ChannelsHttpHandler {
  /** Whether a request path belongs to the channels (`/channels/…`). */
  matches(path: string): boolean;
  /** Reads the body (up to the limit), hands it to the platform's adapter and writes its answer. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

const PREFIX = '/channels/';

/**
 * Creates the handler of inbound platform callbacks (Slack's Events API, WhatsApp's webhook).
 * The body is read whole, since signatures cover its exact bytes; a larger one is refused 413.
 */
export function createChannelsHttpHandler(options: {
  service: Pick<ChannelsService, 'webhook'>;
  /** @default 1048576 (1 MB) */
  maxBodyBytes?: number;
}): ChannelsHttpHandler {
  const limit = options.maxBodyBytes ?? 1_048_576;
  return {
    matches: (path) => path.startsWith(PREFIX),
    async handle(req, res) {
      const url = new URL(req.url ?? '/', 'http://local');
      const [platform = '', ...rest] = url.pathname.slice(PREFIX.length).split('/');
      const body = await readLimited(req, limit);
      if (!body) {
        res.writeHead(413, { 'content-type': 'text/plain' }).end('payload too large');
        return;
      }
      try {
        const answer = await options.service.webhook(platform, {
          method: req.method ?? 'GET',
          path: `/${rest.join('/')}`,
          query: url.searchParams,
          headers: req.headers,
          body,
        });
        res
          .writeHead(answer.status, answer.headers ?? { 'content-type': 'text/plain' })
          .end(answer.body ?? '');
      } catch {
        res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error');
      }
    },
  };
}

/** The request body, or `undefined` once it exceeds `limit` bytes (the rest is not read). */
async function readLimited(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
