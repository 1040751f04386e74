import { z } from 'zod';

// No fixed maximum here: the bound is `media.maxInputBytes` (live config), checked from the
// string's length before anything is decoded and answered as TOO_LARGE on the field; the
// gateway's message-size limit bounds what can arrive at all.
const base64 = z.string().min(1);
const agentId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - (1 to 64)')
  .describe('Agent whose workspace and limits apply (default: default)');
const mimeType = z
  .string()
  .regex(/^[a-z0-9.+-]+\/[a-z0-9.+-]+$/i, 'a MIME type such as audio/ogg')
  .max(200);
const language = z
  .string()
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, 'a language tag such as en or en-US');
const channelType = z.string().min(1).max(64);
const channelId = z.string().min(1).max(256);
const url = z.string().min(1).max(8192);
const sessionKey = z
  .string()
  .min(1)
  .max(512)
  .describe('Session the speech belongs to: its voice evidence lands in that session (obs.explain)');

/**
 * zod schemas of every media operation's parameters, shared by the daemon's methods and the
 * agent tools so both validate alike. `_caller…` fields are what the daemon injects for calls
 * made from an agent turn on a channel.
 */
export const mediaParamSchemas = {
  audioTranscribe: z
    .object({
      audio: base64.describe('Audio bytes, base64'),
      mimeType: mimeType
        .optional()
        .describe('Declared type (default audio/ogg); the bytes are sniffed anyway'),
      language: language.optional().describe('Spoken language, e.g. en'),
      sessionKey: sessionKey.optional(),
    })
    .strict(),
  mediaData: z
    .object({
      data: base64.describe('File bytes, base64 (a data: URI is accepted)'),
      mimeType: mimeType.optional().describe('Declared type; the bytes are sniffed anyway'),
      language: language.optional(),
      sessionKey: sessionKey.optional(),
    })
    .strict(),
  describeVideo: z
    .object({
      data: base64.describe('Video bytes, base64'),
      mimeType: mimeType.optional(),
      prompt: z.string().min(1).max(4000).optional().describe('Default: Describe this video concisely.'),
    })
    .strict(),
  synthesize: z
    .object({
      text: z.string().min(1).max(100_000).describe('Text to speak; [[tts:voice=<voice>]] directives apply'),
      voice: z
        .string()
        .regex(/^[A-Za-z0-9_+.-]{1,64}$/)
        .optional()
        .describe('Voice (espeak-ng name or the provider voice)'),
      agentId: agentId.optional(),
      format: z
        .enum(['opus', 'mp3'])
        .optional()
        .describe('Output format; default by channel (Opus for telegram/whatsapp)'),
      channelType: channelType.optional(),
      sessionKey: sessionKey.optional(),
      _callerChannelType: channelType.optional(),
    })
    .strict(),
  autoCheck: z
    .object({
      text: z.string().max(100_000),
      inboundAudio: z.boolean().optional().describe('The message answered was a voice note'),
      inboundMedia: z.boolean().optional().describe('The message answered carried media'),
    })
    .strict(),
  imageAnalyze: z
    .object({
      image: z.string().min(1).optional().describe('Base64 data URI or base64 image'),
      url: url.optional().describe('http(s) URL of the image or channel attachment'),
      path: z.string().min(1).max(4096).optional().describe('Path inside the agent workspace'),
      prompt: z.string().min(1).max(4000).optional().describe('Default: Describe this image in detail'),
      agentId: agentId.optional(),
      channelType: channelType.optional(),
      channelId: channelId.optional(),
      _callerChannelType: channelType.optional(),
      _callerChannelId: channelId.optional(),
    })
    .strict()
    .refine((value) => [value.image, value.url, value.path].filter(Boolean).length === 1, {
      message: 'give exactly one of image, url, path',
      path: ['image'],
    }),
  imageGenerate: z
    .object({
      prompt: z.string().min(1).max(4000),
      size: z
        .string()
        .regex(/^\d{2,5}x\d{2,5}$/)
        .optional(),
      agentId: agentId.optional(),
      _callerChannelType: channelType.optional(),
      _callerChannelId: channelId.optional(),
      _agentId: agentId.optional(),
    })
    .strict(),
  linkProcess: z.object({ text: z.string().min(1).max(100_000).describe('Message text with URLs') }).strict(),
  testTts: z
    .object({
      text: z.string().min(1).max(2000).optional().describe('Default: a fixed test sentence'),
      voice: z
        .string()
        .regex(/^[A-Za-z0-9_+.-]{1,64}$/)
        .optional(),
    })
    .strict(),
  testVision: z
    .object({ data: base64, mimeType: mimeType.optional(), prompt: z.string().min(1).max(4000).optional() })
    .strict(),
  testLink: z
    .object({
      url: url.optional().describe('URL to read'),
      data: base64.optional().describe('Base64 text containing URLs'),
    })
    .strict()
    .refine((value) => (value.url === undefined) !== (value.data === undefined), {
      message: 'give exactly one of url, data',
      path: ['url'],
    }),
  none: z.object({}).strict(),
} as const;
