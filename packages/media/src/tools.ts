import type { AgentTool, DefineTool, ToolContext } from '@agentd/contracts';
import type { MediaService } from './media-service.js';
import { mediaParamSchemas } from './params.js';

/** One tool of the list below; see {@link DefineTool}. */
const tool: DefineTool = (name, description, params, handler) => ({ name, description, params, handler });

const scopeOf = (context: ToolContext) => ({
  agentId: context.agentId,
  sessionKey: context.sessionKey,
  signal: context.signal,
});

/**
 * The media operations as agent tools: transcribe, speak, analyze image, generate image,
 * read document, read link. Each runs as the calling agent (its workspace, its hourly image
 * limit) and its speech turns land in that session's `voice` evidence.
 */
export function createMediaTools(service: MediaService): AgentTool[] {
  const s = mediaParamSchemas;
  return [
    tool(
      'media_transcribe',
      'Transcribe audio (base64; any common format) to text.',
      s.mediaData.omit({ sessionKey: true }),
      (params, context) =>
        service.transcribe({ data: params.data, language: params.language }, scopeOf(context)),
    ),
    tool(
      'media_speak',
      'Speak text as an audio file in the workspace (media/tts/); returns its path. [[tts:voice=<voice>]] picks a voice.',
      s.synthesize.omit({ agentId: true, sessionKey: true }),
      (params, context) => service.synthesize({ ...params, agentId: context.agentId }, scopeOf(context)),
    ),
    tool(
      'media_analyze_image',
      'Describe an image given as base64/data URI, an http(s) URL or a workspace path. Without a vision model the keyless engine answers: it reads the text and basic properties and says so, but cannot recognise objects.',
      s.imageAnalyze,
      (params, context) => service.analyzeImage({ ...params, agentId: context.agentId }, scopeOf(context)),
    ),
    tool(
      'media_generate_image',
      'Generate an image from a prompt; in a chat conversation it is sent to that chat, else returned as base64 PNG.',
      // The target chat is the turn's own (set by the channels), never one the model names.
      s.imageGenerate.omit({ _callerChannelType: true, _callerChannelId: true }),
      (params, context) =>
        service.generateImage(
          {
            ...params,
            agentId: context.agentId,
            ...(context.callerChannel
              ? {
                  _callerChannelType: context.callerChannel.channelType,
                  _callerChannelId: context.callerChannel.channelId,
                }
              : {}),
          },
          scopeOf(context),
        ),
    ),
    tool(
      'media_read_document',
      'Extract the text of a PDF, DOCX, HTML or text file (base64).',
      s.mediaData,
      (params) => service.extractDocument(params),
    ),
    tool(
      'media_read_link',
      'Fetch the URLs in a text and return each page’s title, readable text and summary.',
      s.linkProcess,
      (params, context) => service.processLinks(params, scopeOf(context)),
    ),
  ];
}
