import type { IncomingMessage } from 'node:http';
import { RpcError } from '../errors.js';
import type { RpcLogger } from '../logger.js';
import type { Identity } from '../method.js';
import type { Authenticate } from '../websocket-transport.js';

/** What authenticating one HTTP request came to: the caller, or the refusal to answer with. */
export type HttpAuthOutcome =
  | { identity: Identity }
  | { identity: undefined; status: 401 | 500; error: RpcError; headers: Record<string, string> };

/**
 * The authentication step of the HTTP transports (`POST /rpc` and the SSE handler): runs the
 * callback once, answering synchronously when the callback does; a callback that throws is logged and refused with 500 (the cause stays in the
 * log), a request without an identity is logged and refused with 401 and a Bearer challenge.
 * Each transport writes the refusal in its own body format.
 *
 * @param label - names the transport in the log messages, for example `http rpc`.
 */
export function authenticateHttp(
  authenticate: Authenticate,
  request: IncomingMessage,
  logger: RpcLogger,
  label: string,
): HttpAuthOutcome | Promise<HttpAuthOutcome> {
  const threw = (error: unknown): HttpAuthOutcome => {
    logger.error(
      {
        err: error,
        errorKind: 'internal',
        hint: 'The authenticate callback threw; the request got HTTP 500.',
      },
      `${label} authentication failed`,
    );
    return { identity: undefined, status: 500, error: RpcError.internal(), headers: {} };
  };
  const decide = (identity: Identity | null | undefined): HttpAuthOutcome => {
    if (identity) return { identity };
    logger.warn(
      { errorKind: 'auth', hint: 'The request carried no valid bearer token; it got HTTP 401.' },
      `${label} unauthorized`,
    );
    return {
      identity: undefined,
      status: 401,
      error: RpcError.unauthorized(),
      headers: { 'www-authenticate': 'Bearer' },
    };
  };
  // A synchronous callback (the usual token-store lookup) is answered without a promise.
  let identity: ReturnType<Authenticate>;
  try {
    identity = authenticate(request);
  } catch (error) {
    return threw(error);
  }
  return identity instanceof Promise ? identity.then(decide, threw) : decide(identity);
}
