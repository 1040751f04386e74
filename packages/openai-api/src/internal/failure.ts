import type { Logger } from '@agentd/contracts';
import { isOpenAiApiError, OpenAiApiError } from '../errors.js';

/** The answer of a failure: its own for an {@link OpenAiApiError}, else a logged 500 saying nothing of the cause. */
export function toApiError(error: unknown, logger: Logger): OpenAiApiError {
  if (isOpenAiApiError(error)) return error;
  logger.error(
    { err: error, errorKind: 'internal', hint: 'an OpenAI API request failed inside the daemon; see err' },
    'openai api request failed',
  );
  return new OpenAiApiError(
    500,
    'server_error',
    'internal_error',
    'The server had an error processing the request',
  );
}
