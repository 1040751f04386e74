import type { IncomingMessage } from 'node:http';

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
 * @returns the text, or `{ ok: false }` with the declared size when that refused it.
 * Rejects only when the request stream fails (the client went away).
 */
export function readBoundedBody(request: IncomingMessage, maxBytes: number): Promise<BoundedBody> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    return Promise.resolve({ ok: false, declaredBytes: declared });
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        request.off('data', onData);
        resolve({ ok: false, declaredBytes: undefined });
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('end', () => resolve({ ok: true, text: Buffer.concat(chunks).toString('utf8') }));
    request.once('error', reject);
  });
}
