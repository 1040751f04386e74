import { CALLER_ERROR_CODES, isMediaError, type MediaService, mediaParamSchemas } from '@agentd/media';
import { ErrorCodes, type MethodContext, RpcError } from '@agentd/rpc-core';
import { channelsRpcError } from './channels.js';
import type { z } from 'zod';
import { methodsOf } from './define.js';

// What the caller sent wrong is -32602 naming the field; an hourly image limit and a capability
// that is not configured are -32000 (as a disabled memory or web search are), `data.code`
// saying which; everything else the media package refused (engine missing, provider failed,
// denied by a scope rule) is -32603 with its readable message and `data.code`.
function toRpcError(error: unknown): unknown {
  // A generated image sent to its chat can fail in the channels (unconfigured, dead-lettered).
  if (!isMediaError(error)) return channelsRpcError(error);
  if (CALLER_ERROR_CODES.has(error.code)) {
    const field = String(error.data?.field ?? 'params');
    return new RpcError(ErrorCodes.InvalidParams, `Invalid params: ${error.message}`, {
      data: { issues: [{ path: [field], code: 'custom', message: error.message }], code: error.code },
    });
  }
  if (error.code === 'RATE_LIMITED' || error.code === 'NOT_CONFIGURED')
    return new RpcError(-32000, error.message, { data: { code: error.code } });
  return new RpcError(ErrorCodes.InternalError, error.message, { data: { code: error.code }, cause: error });
}

/** The call's abort signal and, when the caller names one, the session its voice evidence joins. */
const scopeOf = (
  context: MethodContext,
  params: { sessionKey?: string | undefined; agentId?: string | undefined } = {},
) => ({
  signal: context.signal,
  ...(params.sessionKey ? { sessionKey: params.sessionKey } : {}),
  ...(params.agentId ? { agentId: params.agentId } : {}),
});

/**
 * `audio.transcribe` answers `{ error }` inside the result when speech-to-text is not
 * configured or fails (the contract's form); what the caller sent wrong stays -32602.
 */
async function transcribeOrError(
  run: () => Promise<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  try {
    return await run();
  } catch (error) {
    if (isMediaError(error) && !CALLER_ERROR_CODES.has(error.code)) return { error: error.message };
    throw toRpcError(error);
  }
}

/** audio.*, tts.*, image.*, link.* and media.*: the media package's operations. */
export function mediaMethods(deps: { media: MediaService }) {
  const { media } = deps;
  const p = mediaParamSchemas;
  const audio = methodsOf('audio', toRpcError);
  const tts = methodsOf('tts', toRpcError);
  const image = methodsOf('image', toRpcError);
  const link = methodsOf('link', toRpcError);
  const m = methodsOf('media', toRpcError);
  // media.test.<capability>: one real round trip, reported (engine, duration, outcome), not thrown.
  const selfTest = <TParams extends z.ZodType>(
    capability: string,
    roundTrip: string,
    params: TParams,
    handler: (params: z.output<TParams>, context: MethodContext) => Promise<unknown>,
  ) =>
    m.adminMethod(`test.${capability}`, {
      description: `One real ${roundTrip}: engine, duration, outcome.`,
      params,
      handler,
    });
  return [
    audio.rpcMethod('transcribe', {
      description:
        'Speech to text of base64 audio (any common format); keyless engine first. {error} when not configured or failed.',
      params: p.audioTranscribe,
      handler: (params, context) =>
        transcribeOrError(async () => {
          const { text, language, durationMs, engine, keyless } = await media.transcribe(
            { data: params.audio, language: params.language, field: 'audio' },
            scopeOf(context, params),
          );
          return { text, ...(language ? { language } : {}), durationMs, engine, keyless };
        }),
    }),
    tts.rpcMethod('synthesize', {
      description:
        'Text to speech into media/tts/ of the agent workspace; Opus for telegram/whatsapp, MP3 otherwise.',
      params: p.synthesize,
      handler: async (params, context) => {
        const { absolutePath: _absolute, ...spoken } = await media.synthesize(
          params,
          scopeOf(context, params),
        );
        return spoken;
      },
    }),
    tts.rpcMethod('auto_check', {
      description:
        'Whether speech should be synthesized for a response (tts.autoMode), with directives stripped.',
      params: p.autoCheck,
      handler: (params) => media.autoCheck(params),
    }),
    image.rpcMethod('generate', {
      description:
        'Generate an image from a prompt (configured provider); base64 PNG; imageGen.maxPerHour per agent.',
      params: p.imageGenerate,
      handler: (params, context) => media.generateImage(params, scopeOf(context)),
    }),
    image.rpcMethod('analyze', {
      description: 'Describe an image given as base64/data URI, URL or workspace path (vision provider).',
      params: p.imageAnalyze,
      handler: (params, context) => media.analyzeImage(params, scopeOf(context)),
    }),
    link.rpcMethod('process', {
      description:
        'Fetch the URLs in a text (private-network guard) and return it enriched with titles and summaries.',
      params: p.linkProcess,
      handler: (params, context) => media.processLinks(params, scopeOf(context)),
    }),
    m.rpcMethod('transcribe', {
      description: 'Transcribe an audio attachment (base64 data; MIME type sniffed from the bytes).',
      params: p.mediaData,
      handler: (params, context) =>
        media.transcribe({ data: params.data, language: params.language }, scopeOf(context, params)),
    }),
    m.rpcMethod('describe_video', {
      description:
        'Describe a video attachment from key frames; errors when no video-capable vision provider is configured.',
      params: p.describeVideo,
      handler: (params, context) => media.describeVideo(params, scopeOf(context)),
    }),
    m.rpcMethod('extract_document', {
      description:
        'Text of a PDF, DOCX, HTML or text attachment, with truncated when cut at the character limit.',
      params: p.mediaData,
      handler: (params) => media.extractDocument(params),
    }),
    selfTest('stt', 'speech-to-text round trip on base64 audio', p.mediaData, (params, context) =>
      media.test.stt(params, scopeOf(context, params)),
    ),
    selfTest('tts', 'text-to-speech round trip', p.testTts, (params, context) =>
      media.test.tts(params, scopeOf(context)),
    ),
    selfTest('vision', 'image analysis on a base64 image', p.testVision, (params, context) =>
      media.test.vision(params, scopeOf(context)),
    ),
    selfTest('document', 'document extraction on base64 bytes', p.mediaData, (params) =>
      media.test.document(params),
    ),
    selfTest('video', 'video description on base64 bytes', p.describeVideo, (params, context) =>
      media.test.video(params, scopeOf(context)),
    ),
    selfTest('link', 'link read (a URL, or base64 text with URLs)', p.testLink, (params, context) =>
      media.test.link(params, scopeOf(context)),
    ),
    m.adminMethod('providers', {
      description:
        "Each media capability's engines: keyless found or not, keyed configured or not (never a key).",
      handler: () => media.providers(),
    }),
  ];
}
