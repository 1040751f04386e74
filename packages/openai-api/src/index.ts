export { agentOfModel, MODEL_PREFIX, mapFinishReason } from './chat.js';
export {
  invalidRequest,
  isOpenAiApiError,
  OpenAiApiError,
  type OpenAiApiErrorData,
  type OpenAiErrorType,
} from './errors.js';
export {
  createOpenAiApiHandler,
  modelNotFound,
  type OpenAiApiHandler,
  type OpenAiApiHandlerOptions,
} from './handler.js';
export { type OpenAiApiSection, openaiApiSectionSchema } from './options.js';
export type {
  ChatTurn,
  ChatTurnResult,
  EmbedResult,
  OpenAiBackend,
  OpenAiModel,
  RateLimiter,
  SessionChoice,
} from './types.js';
