/** An inbound platform HTTP request, already read (the body whole, as the signature needs it). */
export interface WebhookRequest {
  method: string;
  /** The path after `/channels/<platform>`, e.g. `/webhook`. */
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** What to answer the platform. */
export interface WebhookResponse {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** A header's single value. */
export function header(request: WebhookRequest, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** Parses a JSON body; `undefined` when it is not JSON. */
export function jsonBody(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

export const text = (status: number, body = ''): WebhookResponse => ({
  status,
  headers: { 'content-type': 'text/plain; charset=utf-8' },
  body,
});
