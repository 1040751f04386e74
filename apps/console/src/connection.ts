import { ClientError, createWsClient, RpcCallError, type WsClient } from '@agentd/client';

const TOKEN_KEY = 'agentd.console.token';

/** Why a login failed, worded for the login form. */
export class LoginError extends Error {}

/** The console's one connection to the daemon, and what its token may do. */
export interface Connection {
  /** The JSON-RPC client over `/ws`: every page calls methods through it. */
  readonly client: WsClient;
  /** Whether the token holds the admin scope (admin pages are shown only then). */
  readonly admin: boolean;
  /** The bearer token, for the one HTTP endpoint pages use besides `/ws`: the chat stream. */
  readonly token: string;
  close(): Promise<void>;
}

/** `ws://host/ws` (or `wss:`) of the origin that served the page. */
export function wsUrl(location: Location = window.location): string {
  return `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/ws`;
}

/**
 * Opens the WebSocket with `token`. Rejects with {@link LoginError} when the daemon refuses the
 * token (it closes with 4001) or cannot be reached. Whether the token is an admin one is asked
 * once with `gateway.status` (admin scope): a refusal for scope means an `rpc` token.
 */
export async function connect(token: string): Promise<Connection> {
  const client = createWsClient({ url: wsUrl(), token, tokenLocation: 'query', requestTimeoutMs: 120_000 });
  try {
    await client.connect();
  } catch (error) {
    await client.close();
    if (error instanceof ClientError && error.code === 'UNAUTHORIZED')
      throw new LoginError('The daemon refused this token.');
    throw new LoginError(`The daemon could not be reached: ${(error as Error).message}`);
  }
  let admin = true;
  try {
    await client.call('gateway.status');
  } catch (error) {
    if (!(error instanceof RpcCallError && /scope/i.test(error.message))) throw error;
    admin = false;
  }
  return { client, admin, token, close: () => client.close() };
}

/** The token of this tab (session storage: gone when the tab closes, never shared with others). */
export const tokenStore = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

/**
 * Ends the console session of `token` (`POST /console/logout`): the daemon revokes a session
 * token it minted at login and leaves any other token alone. Never rejects: a token already
 * gone is the same outcome.
 */
export async function endSession(token: string): Promise<void> {
  await fetch('/console/logout', { method: 'POST', headers: { authorization: `Bearer ${token}` } }).catch(
    () => undefined,
  );
}

/**
 * Exchanges the one-time code of an `agentd console` link (`#login=<code>`) for a token with
 * `POST /console/login`. Rejects with {@link LoginError} when the code is wrong, used or expired.
 */
export async function exchangeLoginCode(code: string): Promise<string> {
  const response = await fetch('/console/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  const body = (await response.json().catch(() => ({}))) as { token?: string; error?: string };
  if (!response.ok || typeof body.token !== 'string')
    throw new LoginError(body.error ?? `The login link was refused (HTTP ${response.status}).`);
  return body.token;
}
