import type { IncomingMessage, ServerResponse } from 'node:http';

/** A server-sent event stream of JSON `data:` lines, closed by `data: [DONE]`. */
export interface ChunkStream {
  /** Sends one chunk (as event `event` when given); opens the stream (status 200) on the first call. */
  send(chunk: unknown, event?: string): void;
  /** Ends the response without `[DONE]` (the Responses API's streams end so). */
  end(): void;
  /** Sends `data: [DONE]` and ends the response. */
  done(): void;
  /** Whether the stream has been opened. */
  readonly opened: boolean;
}

/**
 * The stream of one response. A client that stops reading while more than `maxBufferedBytes`
 * wait for it is cut off (`onOverflow` cancels the turn) rather than buffered without bound.
 */
export function createChunkStream(
  response: ServerResponse,
  options: { headers: Record<string, string>; maxBufferedBytes: number; onOverflow: () => void },
): ChunkStream {
  let opened = false;
  const open = (): void => {
    if (opened) return;
    opened = true;
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...options.headers,
    });
    response.flushHeaders();
  };
  const write = (text: string): void => {
    if (response.destroyed || response.writableEnded) return;
    response.write(text);
    if (options.maxBufferedBytes > 0 && response.writableLength > options.maxBufferedBytes) {
      response.destroy();
      options.onOverflow();
    }
  };
  return {
    send(chunk, event) {
      open();
      write(`${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(chunk)}\n\n`);
    },
    end() {
      open();
      if (!response.destroyed) response.end();
    },
    done() {
      open();
      write('data: [DONE]\n\n');
      if (!response.destroyed) response.end();
    },
    get opened() {
      return opened;
    },
  };
}

/** The session a request names in its `x-agentd-session` header, if it names one. */
export function sessionHeader(request: IncomingMessage): string | undefined {
  const header = request.headers['x-agentd-session'];
  return typeof header === 'string' && header !== '' ? header : undefined;
}
