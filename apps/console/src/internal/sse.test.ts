import { describe, expect, it } from 'vitest';
import { readEvents } from './sse.js';

/** A body that delivers `parts` as separate chunks, as a network would. */
function body(parts: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(encoder.encode(part));
      controller.close();
    },
  });
}

async function collect(parts: string[]) {
  const events = [];
  for await (const event of readEvents(body(parts))) events.push(event);
  return events;
}

describe('readEvents', () => {
  it('parses events split across chunks, with ids, CRLF and multi-line data', async () => {
    expect(
      await collect([
        'event: start\ndata: {"sessionKey":"a"}\n\nevent: del',
        'ta\r\nid: 3\r\ndata: {"text":"hé"}\r\n\r\n',
        'data: line one\ndata: line two\n\n: a comment\n\n',
      ]),
    ).toEqual([
      { event: 'start', data: { sessionKey: 'a' } },
      { event: 'delta', data: { text: 'hé' } },
      { event: 'message', data: 'line one\nline two' },
    ]);
  });

  it('ends an event at a CRLF blank line split across chunks, never reading the CR alone as an end', async () => {
    expect(
      await collect(['event: delta\r\ndata: {"text":"a"}\r', '\n\r', '\nevent: done\r\ndata: {}\r\n\r\n']),
    ).toEqual([
      { event: 'delta', data: { text: 'a' } },
      { event: 'done', data: {} },
    ]);
  });

  it('decodes a multi-byte character split between chunks', async () => {
    const bytes = new TextEncoder().encode('data: {"text":"€"}\n\n');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 16));
        controller.enqueue(bytes.slice(16));
        controller.close();
      },
    });
    const events = [];
    for await (const event of readEvents(stream)) events.push(event);
    expect(events).toEqual([{ event: 'message', data: { text: '€' } }]);
  });
});
