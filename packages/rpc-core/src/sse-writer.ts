import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { RpcCoreError } from './errors.js';
import { parseOptions } from './internal/options.js';

/** Options of {@link createSseWriter}. */
export interface SseWriterOptions {
  /**
   * Interval of `: heartbeat` comment lines that keep proxies from timing the stream out; `0` disables.
   * @default 15000
   */
  heartbeatMs?: number | undefined;
  /**
   * Reconnection delay suggested to the browser with a `retry:` line; omitted when undefined.
   * @default undefined
   */
  retryMs?: number | undefined;
  /**
   * Bytes of events waiting in the process for the client past which it counts as not reading:
   * if they do not drain within `slowClientTimeoutMs` the stream is ended (`overflowed` turns
   * true) instead of buffering without bound; `0` turns the cap off.
   * @default 1048576
   */
  maxBufferedBytes?: number | undefined;
  /**
   * How long the waiting bytes may stay over `maxBufferedBytes` (a burst a reading client takes
   * in passes; a client that stopped reading does not).
   * @default 10000
   */
  slowClientTimeoutMs?: number | undefined;
}

/** One server-sent event. */
export interface SseEvent {
  /** Event name (`event:` line); the browser's default `message` when omitted. Must not contain a line break. */
  event?: string | undefined;
  /** Payload, serialised with `JSON.stringify`. */
  data: unknown;
  /** Event id (`id:` line) for `Last-Event-ID` resumption. Must not contain a line break. */
  id?: string | number | undefined;
}

/** Writes a `text/event-stream` response. */
export interface SseWriter {
  /** Writes one event; returns `false` (and writes nothing) once the stream is closed. */
  send(event: SseEvent): boolean;
  /** Writes a comment line (ignored by clients); returns `false` once the stream is closed. */
  comment(text: string): boolean;
  /** Ends the response and stops the heartbeat. Idempotent. */
  close(): void;
  /** Whether the stream has ended, by `close()` or because the client went away. */
  readonly closed: boolean;
  /** Whether the stream was ended because the client stopped reading (see `maxBufferedBytes`). */
  readonly overflowed: boolean;
  /** Calls `listener` once when the stream ends (at once if it already has); returns a function that unsubscribes. */
  onClose(listener: () => void): () => void;
}

const optionsSchema = z.object({
  heartbeatMs: z.number().int().nonnegative().default(15_000),
  retryMs: z.number().int().nonnegative().optional(),
  maxBufferedBytes: z.number().int().nonnegative().default(1_048_576),
  slowClientTimeoutMs: z.number().int().positive().default(10_000),
});

const lineBreak = /\r\n|\r|\n/;

function checkField(name: string, value: string): string {
  if (lineBreak.test(value)) {
    throw new RpcCoreError('INVALID_ARGUMENT', `SSE ${name} must not contain a line break`, {
      data: { name },
    });
  }
  return value;
}

/**
 * Starts a server-sent-events response on `response` (status 200, `text/event-stream`, no caching, no proxy
 * buffering) and returns a writer for it.
 *
 * @throws {RpcCoreError} `INVALID_OPTIONS` when the options fail validation.
 */
export function createSseWriter(response: ServerResponse, options: SseWriterOptions = {}): SseWriter {
  const parsed = parseOptions(optionsSchema, options, 'createSseWriter');
  const { heartbeatMs, retryMs, maxBufferedBytes, slowClientTimeoutMs } = parsed;
  const listeners = new Set<() => void>();
  let closed = false;
  let overflowed = false;
  let heartbeat: NodeJS.Timeout | undefined;
  let slow: NodeJS.Timeout | undefined;

  function finish(): void {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    clearTimeout(slow);
    for (const listener of [...listeners]) listener();
    listeners.clear();
  }

  response.statusCode = 200;
  response.setHeader('content-type', 'text/event-stream; charset=utf-8');
  response.setHeader('cache-control', 'no-cache, no-transform');
  response.setHeader('connection', 'keep-alive');
  response.setHeader('x-accel-buffering', 'no');
  response.flushHeaders();
  response.once('close', finish);
  if (retryMs !== undefined) response.write(`retry: ${retryMs}\n\n`);

  function write(chunk: string): boolean {
    if (closed || response.writableEnded || response.destroyed) return false;
    response.write(chunk);
    if (maxBufferedBytes > 0 && slow === undefined && response.writableLength > maxBufferedBytes) watchSlow();
    return true;
  }

  /** Over the cap: a client that drains in time is fine; one that does not is cut off. */
  function watchSlow(): void {
    const drained = (): void => {
      clearTimeout(slow);
      slow = undefined;
    };
    response.once('drain', drained);
    slow = setTimeout(() => {
      response.off('drain', drained);
      // The client stopped reading: end the stream (its listeners cancel the work feeding it).
      overflowed = true;
      response.destroy();
      finish();
    }, slowClientTimeoutMs);
    slow.unref();
  }

  function comment(text: string): boolean {
    return write(
      `${text
        .split(lineBreak)
        .map((line) => `: ${line}`)
        .join('\n')}\n\n`,
    );
  }

  if (heartbeatMs > 0) {
    heartbeat = setInterval(() => comment('heartbeat'), heartbeatMs);
    heartbeat.unref();
  }

  function send(event: SseEvent): boolean {
    let chunk = '';
    if (event.event !== undefined) chunk += `event: ${checkField('event', event.event)}\n`;
    if (event.id !== undefined) chunk += `id: ${checkField('id', String(event.id))}\n`;
    // JSON.stringify escapes line breaks inside strings; splitting still guards payloads that serialise
    // to something else (for example `undefined`) and keeps the framing correct whatever arrives.
    const serialised = JSON.stringify(event.data) ?? 'null';
    for (const line of serialised.split(lineBreak)) chunk += `data: ${line}\n`;
    return write(`${chunk}\n`);
  }

  function close(): void {
    if (!response.writableEnded) response.end();
    finish();
  }

  function onClose(listener: () => void): () => void {
    if (closed) {
      listener();
      return () => {};
    }
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  return {
    send,
    comment,
    close,
    get closed() {
      return closed;
    },
    get overflowed() {
      return overflowed;
    },
    onClose,
  };
}
