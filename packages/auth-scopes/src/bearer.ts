/** The parts of a Node `IncomingMessage` that {@link extractBearer} reads. */
export interface BearerRequest {
  headers: Record<string, string | string[] | undefined>;
  url?: string | undefined;
}

/** Options of {@link extractBearer}. */
export interface ExtractBearerOptions {
  /**
   * Accept `?token=<secret>` when no bearer header is present. Browsers cannot
   * set headers on a WebSocket upgrade, so `/ws` allows it; `POST /rpc` should
   * not, since query strings end up in proxy and access logs.
   * @default false
   */
  allowQuery?: boolean;
}

const BEARER_PATTERN = /^\s*bearer\s+(\S+)\s*$/i;

/**
 * The bearer secret a request presents, or `undefined` when it presents none.
 * Reads `Authorization: Bearer <secret>` (scheme case-insensitive); when that
 * header is absent or carries another scheme and `allowQuery` is set, falls
 * back to the `token` query parameter. An empty value counts as none.
 */
export function extractBearer(
  request: BearerRequest,
  options: ExtractBearerOptions = {},
): string | undefined {
  const header = request.headers.authorization;
  const value = Array.isArray(header) ? header[0] : header;
  if (value !== undefined) {
    const match = BEARER_PATTERN.exec(value);
    if (match?.[1] !== undefined) return match[1];
  }
  if (options.allowQuery !== true || request.url === undefined) return undefined;
  const queryStart = request.url.indexOf('?');
  if (queryStart === -1) return undefined;
  const token = new URLSearchParams(request.url.slice(queryStart + 1)).get('token');
  return token === null || token === '' ? undefined : token;
}
