import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** One server-sent event: its name and its JSON data. */
export interface SseEvent {
  event: string;
  data: unknown;
}

/**
 * Reads a `text/event-stream` body and yields each event with its data parsed as JSON (the raw
 * text when it is not JSON). The framing (CR, LF or CRLF line ends, a CRLF split across chunks,
 * multi-line `data:`, comments, `id:` and `retry:`) is `eventsource-parser`'s, which follows the
 * WHATWG specification.
 */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const ready: SseEvent[] = [];
  const parser = createParser({ onEvent: (message) => ready.push(toEvent(message)) });
  for (;;) {
    const { value, done } = await reader.read();
    parser.feed(done ? decoder.decode() : decoder.decode(value, { stream: true }));
    // The specification drops an event the stream ends in the middle of; so does the parser.
    yield* ready.splice(0);
    if (done) return;
  }
}

function toEvent(message: EventSourceMessage): SseEvent {
  const event = message.event ?? 'message';
  try {
    return { event, data: JSON.parse(message.data) };
  } catch {
    return { event, data: message.data };
  }
}
