/**
 * One JSON-RPC call to the agentd gateway as the MCP caller: inside the daemon it goes through
 * the dispatcher with the request's identity; from `agentd mcp` it goes over HTTP with the
 * token. Either way scopes, tenant binding and audit are the gateway's. It rejects with an
 * error carrying the wire `code` (a number) and `message`.
 */
export type GatewayCall = (method: string, params: Record<string, unknown>) => Promise<unknown>;

/** The message of a failed gateway call, safe to show the MCP client (the gateway never sends causes). */
export function callErrorText(error: unknown): string {
  if (error !== null && typeof error === 'object') {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (typeof message === 'string') return typeof code === 'number' ? `${message} (${code})` : message;
  }
  return 'The gateway call failed';
}
