/** What {@link readBoundedStream} read: every byte, or that the stream went past the limit. */
export type BoundedBytes = { readonly ok: true; readonly bytes: Buffer } | { readonly ok: false };

/**
 * Reads a Web stream (a `fetch` answer's body, a Web `Request`'s) of at most `maxBytes`,
 * never holding more: past the limit the stream is cancelled and `{ ok: false }` answered.
 * A missing body reads as empty. Rejects when the stream itself fails.
 */
export async function readBoundedStream(
  body: ReadableStream<Uint8Array> | null | undefined,
  maxBytes: number,
): Promise<BoundedBytes> {
  if (!body) return { ok: true, bytes: Buffer.alloc(0) };
  // A reader rather than `for await`: the DOM typing of ReadableStream (packages the console
  // type-checks) has no async iterator.
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    size += read.value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return { ok: false };
    }
    chunks.push(read.value);
  }
  return { ok: true, bytes: Buffer.concat(chunks, size) };
}
