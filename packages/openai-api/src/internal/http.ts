import type { IncomingMessage, ServerResponse } from 'node:http';
import { inspectValue, pathText, readBoundedBody } from '@agentd/input-guards';
import { invalidRequest, OpenAiApiError } from '../errors.js';

/** Deepest JSON nesting a request body may have; OpenAI bodies are shallow. */
const MAX_DEPTH = 32;

/** Writes a JSON answer (unless a stream already started). */
export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (response.headersSent) return;
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  response.end(text);
}

/** Answers an {@link OpenAiApiError} with its status and body. */
export function sendError(
  response: ServerResponse,
  error: OpenAiApiError,
  headers?: Record<string, string>,
): void {
  sendJson(response, error.status, error.toBody(), headers);
}

function tooLarge(maxBodyBytes: number): OpenAiApiError {
  return new OpenAiApiError(
    413,
    'invalid_request_error',
    'request_too_large',
    `Request body is larger than the limit of ${maxBodyBytes} bytes`,
  );
}

/**
 * Reads and parses a JSON body of at most `maxBodyBytes` (a larger declared or streamed body
 * is refused before it is buffered), refusing nesting deeper than 32 and `__proto__` keys.
 */
export async function readJsonBody(request: IncomingMessage, maxBodyBytes: number): Promise<unknown> {
  const body = await readBoundedBody(request, maxBodyBytes);
  if (!body.ok) {
    request.resume();
    throw tooLarge(maxBodyBytes);
  }
  let value: unknown;
  try {
    value = JSON.parse(body.text);
  } catch {
    throw invalidRequest('The request body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalidRequest('The request body must be a JSON object');
  }
  const problem = inspectValue(value, { maxDepth: MAX_DEPTH });
  if (problem) {
    throw invalidRequest(
      problem.kind === 'depth'
        ? `The request body nests deeper than ${MAX_DEPTH} levels`
        : `The request body has a refused key: ${problem.key}`,
      pathText('body', problem.path),
    );
  }
  return value;
}
