import { ClientError, RPC_ERROR_CODES, type RpcCallError } from '../errors.js';
import type { ProblemFields } from '../logger.js';

/** The JSON-RPC messages of one text frame (a batch is several), or why it cannot be read. */
export function decodeFrame(data: unknown): unknown[] | ClientError {
  if (typeof data !== 'string') {
    return new ClientError('BAD_RESPONSE', 'received a binary frame; agentd sends text frames only');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch (error) {
    return new ClientError('BAD_RESPONSE', 'received a frame that is not JSON', {
      cause: error,
      data: data.slice(0, 200),
    });
  }
  return Array.isArray(parsed) ? parsed : [parsed];
}

/**
 * Classifies an error that reached no caller, with advice for the log line: an
 * unmatched JSON-RPC error (id null) or a frame the client could not read.
 */
export function describeProblem(
  error: ClientError | RpcCallError,
): Pick<ProblemFields, 'errorKind' | 'hint'> {
  if (error instanceof ClientError) {
    return {
      errorKind: 'validation',
      hint: 'the server sent a frame that is not JSON-RPC 2.0 text; check that the url points at the agentd gateway',
    };
  }
  switch (error.code) {
    case RPC_ERROR_CODES.RATE_LIMITED:
      return {
        errorKind: 'resource',
        hint: 'the server rate-limited this connection; send fewer messages or raise gateway.wsMessageRateLimit on the daemon',
      };
    case RPC_ERROR_CODES.PARSE_ERROR:
    case RPC_ERROR_CODES.INVALID_REQUEST:
      return {
        errorKind: 'validation',
        hint: 'the server could not read a message (too large, bad batch or bad JSON); the affected call ends by its timeout',
      };
    default:
      return {
        errorKind: 'dependency',
        hint: 'the server answered with an error no call was waiting for; see err for its code and message',
      };
  }
}
