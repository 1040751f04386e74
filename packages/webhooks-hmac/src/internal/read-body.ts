import type { IncomingMessage } from 'node:http';

/** The outcome of reading a body under a cap. */
export type BodyResult = { ok: true; body: Buffer } | { ok: false; reason: 'too_large' | 'aborted' };

/**
 * Reads a node:http request body, keeping at most `maxBytes`. A declared
 * Content-Length above the cap is refused before reading anything; a body that
 * grows past the cap stops being kept at once. Whatever the client still sends
 * is discarded by node:http after the answer, so memory stays bounded.
 */
export function readNodeBody(request: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes)
    return Promise.resolve({ ok: false, reason: 'too_large' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    // Listeners stay attached after settling (the request is done with either way);
    // the flag makes late events harmless, which is cheaper than detaching them.
    request.on('data', (chunk: Buffer) => {
      if (settled) return;
      total += chunk.length;
      if (total > maxBytes) {
        settled = true;
        chunks.length = 0;
        resolve({ ok: false, reason: 'too_large' });
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      if (settled) return;
      settled = true;
      resolve({ ok: true, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total) });
    });
    request.on('error', () => {
      if (settled) return;
      settled = true;
      resolve({ ok: false, reason: 'aborted' });
    });
  });
}

/** Reads a Web `Request` body under the same cap, cancelling the stream once it is exceeded. */
export async function readWebBody(request: Request, maxBytes: number): Promise<BodyResult> {
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await request.body?.cancel().catch(() => undefined);
    return { ok: false, reason: 'too_large' };
  }
  if (!request.body) return { ok: true, body: Buffer.alloc(0) };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return { ok: false, reason: 'too_large' };
      }
      chunks.push(value);
    }
  } catch {
    return { ok: false, reason: 'aborted' };
  }
  return { ok: true, body: Buffer.concat(chunks, total) };
}
