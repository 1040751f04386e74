import type { IncomingMessage } from 'node:http';

/**
 * Bounds, in bytes, of a configurable request-body limit (the `maxBodyBytes` of agentd's MCP
 * and OpenAI-compatible endpoints): at least 1 KiB, at most 64 MiB, 1 MiB when not configured.
 */
export const BODY_LIMIT = { min: 1024, max: 64 * 1024 * 1024, default: 1024 * 1024 } as const;

/**
 * What {@link readBoundedBody} read: the body as UTF-8 text, or that it is over the limit.
 * `declaredBytes` is the `content-length` that refused it before anything was read; it is
 * `undefined` when the body streamed past the limit (chunked, or a header that lied).
 */
export type BoundedBody =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly declaredBytes: number | undefined };

/**
 * Reads a request body of at most `maxBytes`, never buffering more than that: a larger
 * declared `content-length` is refused before a byte is read, and a body that streams past
 * the limit stops being collected. On refusal the rest of the body is left unread; the caller
 * decides whether to drain it (`request.resume()`, to keep the connection) or to close.
 *
 * The callback form, for hot paths: no promise per request (under AsyncLocalStorage every
 * promise pays for the async hooks). `done` is called once, with the body or the refusal;
 * `failed` when the request stream fails (the client went away).
 */
export function collectBoundedBody(
  request: IncomingMessage,
  maxBytes: number,
  done: (body: BoundedBody) => void,
  failed: (error: Error) => void,
): void {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    done({ ok: false, declaredBytes: declared });
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer): void => {
    size += chunk.length;
    if (size > maxBytes) {
      request.off('data', onData);
      request.off('end', onEnd);
      done({ ok: false, declaredBytes: undefined });
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = (): void => {
    done({
      ok: true,
      text: (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString('utf8'),
    });
  };
  request.on('data', onData);
  request.once('end', onEnd);
  request.once('error', failed);
}

/**
 * {@link collectBoundedBody} as a promise: the text, or `{ ok: false }` with the declared size
 * when that refused it. Rejects only when the request stream fails (the client went away).
 */
export function readBoundedBody(request: IncomingMessage, maxBytes: number): Promise<BoundedBody> {
  return new Promise((resolve, reject) => collectBoundedBody(request, maxBytes, resolve, reject));
}
