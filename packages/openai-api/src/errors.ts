import { AgentdError, errorGuard } from '@agentd/errors';

/** The `type` of an OpenAI error body. */
export type OpenAiErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'server_error';

/** What {@link OpenAiApiError} carries: the HTTP status, the body's `type`, `code` and `param`. */
export interface OpenAiApiErrorData {
  status: number;
  type: OpenAiErrorType;
  param?: string | null;
}

/**
 * A failure answered as OpenAI answers it: HTTP `status` and the body
 * `{error: {message, type, param, code}}`. Backends throw it to pick the answer (an unknown
 * model is 404 `model_not_found`); any other error becomes 500 `server_error` without its message.
 */
export class OpenAiApiError extends AgentdError<string, OpenAiApiErrorData> {
  override readonly name = 'OpenAiApiError';

  /**
   * @param status - the HTTP status.
   * @param type - the body's `type`.
   * @param code - the body's `code` (`invalid_api_key`, `model_not_found`, `rate_limit_exceeded`, ...).
   * @param message - a sentence for the caller; never a secret.
   */
  constructor(
    status: number,
    type: OpenAiErrorType,
    code: string,
    message: string,
    options: { param?: string; cause?: unknown } = {},
  ) {
    super(code, message, {
      data: { status, type, param: options.param ?? null },
      ...(options.cause !== undefined ? { cause: options.cause } : {}),
    });
  }

  /** The OpenAI error body. */
  toBody(): { error: { message: string; type: OpenAiErrorType; param: string | null; code: string } } {
    const data = this.data as OpenAiApiErrorData;
    return { error: { message: this.message, type: data.type, param: data.param ?? null, code: this.code } };
  }

  /** The HTTP status. */
  get status(): number {
    return (this.data as OpenAiApiErrorData).status;
  }
}

/** Whether `error` is an {@link OpenAiApiError} (of `code`, when given). */
export const isOpenAiApiError = errorGuard(OpenAiApiError);

/** 400 `invalid_request_error` naming the field. */
export function invalidRequest(message: string, param?: string): OpenAiApiError {
  return new OpenAiApiError(400, 'invalid_request_error', 'invalid_request', message, {
    ...(param !== undefined ? { param } : {}),
  });
}
