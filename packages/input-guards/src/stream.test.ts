import { describe, expect, it } from 'vitest';
import { readBoundedStream } from './stream.js';

/** A stream of `chunks` that records whether it was cancelled. */
function streamOf(chunks: string[]) {
  const state = { cancelled: false, pulled: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks[state.pulled++];
      if (next === undefined) controller.close();
      else controller.enqueue(new TextEncoder().encode(next));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

describe('readBoundedStream', () => {
  it('reads every byte of a stream within the limit, and a missing body as empty', async () => {
    const { stream, state } = streamOf(['hello ', 'world']);
    const read = await readBoundedStream(stream, 11);
    expect(read.ok && read.bytes.toString('utf8')).toBe('hello world');
    expect(state.cancelled).toBe(false);
    expect(await readBoundedStream(null, 1)).toEqual({ ok: true, bytes: Buffer.alloc(0) });
  });

  it('cancels the stream once it goes past the limit, without reading the rest', async () => {
    const { stream, state } = streamOf(['12345', '67890', 'never read']);
    expect(await readBoundedStream(stream, 8)).toEqual({ ok: false });
    expect(state.cancelled).toBe(true);
    expect(state.pulled).toBeLessThan(3);
  });

  it('rejects when the stream fails', async () => {
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error('reset'));
      },
    });
    await expect(readBoundedStream(stream, 100)).rejects.toThrow('reset');
  });
});
