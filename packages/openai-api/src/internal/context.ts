import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@agentd/contracts';
import type { OpenAiBackend } from '../types.js';

/** What the request handlers of one API share: the backend and the injected clock, ids and logger. */
export interface ApiContext<C> {
  backend: OpenAiBackend<C>;
  logger: Logger;
  now: () => number;
  randomId: () => string;
  /** Bytes a streamed answer may hold for a client that stopped reading. */
  maxBufferedBytes: number;
}

/**
 * A `POST` endpoint that runs one agent turn (chat completions, responses): it gets the
 * authenticated `caller`, the size-checked JSON `body` and the `signal` that fires when the
 * client goes away, and answers on `response` (whole or streamed).
 */
export type TurnEndpoint = <C>(
  ctx: ApiContext<C>,
  request: IncomingMessage,
  response: ServerResponse,
  caller: C,
  body: unknown,
  signal: AbortSignal,
) => Promise<void>;
