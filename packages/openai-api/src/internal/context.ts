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
