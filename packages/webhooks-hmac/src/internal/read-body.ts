import type { IncomingMessage } from 'node:http';
import { readBoundedStream } from '@agentd/input-guards';

/** The outcome of reading a body under a cap. */
export type BodyResult = { ok: true; body: Buffer } | { ok: false; reason: 'too_large' | 'aborted' };

/** Per-request reading state, kept on the request so the listeners can be shared functions. */
interface NodeBodyReader {
  maxBytes: number;
  target: unknown;
  done: (target: unknown, result: BodyResult) => void;
  // The common case is one chunk: it is kept alone, and an array exists only from the second on.
  first: Buffer | undefined;
  rest: Buffer[] | undefined;
  total: number;
  settled: boolean;
}

const READER = Symbol('webhook body reader');

type ReadableRequest = IncomingMessage & { [READER]?: NodeBodyReader };

const TOO_LARGE: BodyResult = Object.freeze({ ok: false, reason: 'too_large' }) as BodyResult;
const ABORTED: BodyResult = Object.freeze({ ok: false, reason: 'aborted' }) as BodyResult;

// Listeners stay attached after settling (the request is done with either way); the
// flag makes late events harmless, which is cheaper than detaching them. They are
// module-level functions reading their state from the request, so a request costs no
// listener closures.
function onData(this: ReadableRequest, chunk: Buffer): void {
  const reader = this[READER];
  if (!reader || reader.settled) return;
  reader.total += chunk.length;
  if (reader.total > reader.maxBytes) {
    reader.settled = true;
    reader.first = undefined;
    reader.rest = undefined;
    reader.done(reader.target, TOO_LARGE);
    return;
  }
  if (reader.first === undefined) reader.first = chunk;
  else if (reader.rest === undefined) reader.rest = [reader.first, chunk];
  else reader.rest.push(chunk);
}

function onEnd(this: ReadableRequest): void {
  const reader = this[READER];
  if (!reader || reader.settled) return;
  reader.settled = true;
  const body =
    reader.rest !== undefined ? Buffer.concat(reader.rest, reader.total) : (reader.first ?? Buffer.alloc(0));
  reader.first = undefined;
  reader.rest = undefined;
  reader.done(reader.target, { ok: true, body });
}

function onError(this: ReadableRequest): void {
  const reader = this[READER];
  if (!reader || reader.settled) return;
  reader.settled = true;
  reader.first = undefined;
  reader.rest = undefined;
  reader.done(reader.target, ABORTED);
}

/**
 * Reads a node:http request body, keeping at most `maxBytes`, and calls
 * `done(target, result)` once. A declared Content-Length above the cap is refused
 * before reading anything (`done` runs at once); a body that grows past the cap stops
 * being kept at once. Whatever the client still sends is discarded by node:http after
 * the answer, so memory stays bounded. `target` is handed back so callers need no
 * closure per request.
 */
export function readNodeBodyInto<T>(
  request: IncomingMessage,
  maxBytes: number,
  target: T,
  done: (target: T, result: BodyResult) => void,
): void {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    done(target, TOO_LARGE);
    return;
  }
  (request as ReadableRequest)[READER] = {
    maxBytes,
    target,
    done: done as (target: unknown, result: BodyResult) => void,
    first: undefined,
    rest: undefined,
    total: 0,
    settled: false,
  };
  request.on('data', onData);
  request.on('end', onEnd);
  request.on('error', onError);
}

/** Reads a Web `Request` body under the same cap, cancelling the stream once it is exceeded. */
export async function readWebBody(request: Request, maxBytes: number): Promise<BodyResult> {
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await request.body?.cancel().catch(() => undefined);
    return { ok: false, reason: 'too_large' };
  }
  try {
    const read = await readBoundedStream(request.body, maxBytes);
    return read.ok ? { ok: true, body: read.bytes } : { ok: false, reason: 'too_large' };
  } catch {
    return { ok: false, reason: 'aborted' };
  }
}
