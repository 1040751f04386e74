export type { DocumentText } from './documents.js';
export { extractDocument } from './documents.js';
export type { MediaErrorCode, MediaErrorOptions } from './errors.js';
export { CALLER_ERROR_CODES, isMediaError, MediaError } from './errors.js';
export type { GeneratedImage } from './image-gen.js';
export type { CallScope } from './internal/context.js';
export type { SniffResult } from './internal/sniff.js';
export { sniffMime } from './internal/sniff.js';
export type { LinkProcessResult, LinkResult } from './links.js';
export { extractiveSummary, findUrls } from './links.js';
export type { MediaLogger } from './logger.js';
export { noopLogger } from './logger.js';
export type { MediaService } from './media-service.js';
export type { MediaTestResult } from './media-tests.js';
export { createMediaService } from './media-service.js';
export type {
  HttpProvider,
  MediaSection,
  MediaSectionInput,
  MediaServiceOptions,
  ResolveHost,
} from './options.js';
export { httpProviderSchema, mediaSectionSchema } from './options.js';
export { mediaParamSchemas } from './params.js';
export type { EngineEntry, ProvidersReport } from './providers.js';
export type { Transcript } from './stt.js';
export type { AutoCheck, Synthesis } from './tts.js';
export { stripDirectives, TTS_DIR } from './tts.js';
export type { VideoDescription, VisionAnswer } from './vision.js';
export { createMediaTools } from './tools.js';
export { readConfinedFile } from './workspace-reader.js';
