import type { EventSink } from '@agentd/contracts';
import { z } from 'zod';
import type { MediaLogger } from './logger.js';

const MB = 1024 * 1024;

/** A size limit in bytes: at least 1 KiB, at most `max`, `fallback` when unset. */
const byteLimit = (max: number, fallback: number) => z.number().int().min(1024).max(max).default(fallback);

/**
 * A keyed OpenAI-compatible endpoint. `apiKey` is a credential: config answers redact it and
 * it may be a `${secret:NAME}` reference, which the host resolves before handing it here.
 */
export const httpProviderSchema = z
  .object({
    /** Name shown by `media.providers` and in voice evidence. @default 'openai' */
    id: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/)
      .default('openai'),
    /** Base URL including the version path, e.g. `https://api.openai.com/v1`. */
    baseUrl: z.string().url(),
    /** API key (Bearer); omitted for a local server without auth. */
    apiKey: z.string().min(1).optional(),
    /** Model name sent with each request. */
    model: z.string().min(1).max(200).optional(),
  })
  .strict();

/** A keyed endpoint as configured. */
export type HttpProvider = z.output<typeof httpProviderSchema>;

const sttSchema = z
  .object({
    /**
     * `auto`: the keyless engine first, then the main provider's key (when `followMainKey`),
     * then `fallbacks` in order. `keyless`: only the local engine. `keyed`: only keyed ones.
     * @default 'auto'
     */
    order: z.enum(['auto', 'keyless', 'keyed']).default('auto'),
    /** Use the daemon's main model provider for `/audio/transcriptions` when it is OpenAI-compatible. @default false */
    followMainKey: z.boolean().default(false),
    /** Keyed providers tried after the keyless engine, in order. @default [] */
    fallbacks: z.array(httpProviderSchema).max(10).default([]),
    /** `pocketsphinx_continuous` program. @default 'pocketsphinx_continuous' */
    pocketsphinxCommand: z.string().min(1).default('pocketsphinx_continuous'),
    /** Optional whisper.cpp command (`whisper-cli`) and model; used before pocketsphinx when both are set. */
    whisperCommand: z.string().min(1).optional(),
    whisperModel: z.string().min(1).optional(),
    /** Longest audio transcribed, in seconds; longer input is `TOO_LARGE`. @default 3600 */
    maxSeconds: z.number().int().min(10).max(86_400).default(3600),
    /** Language the keyless engine's model speaks (pocketsphinx-en-us ships `en`). @default 'en' */
    keylessLanguage: z.string().min(2).max(16).default('en'),
  })
  .strict();

const ttsSchema = z
  .object({
    /** When `tts.auto_check` says synthesis should run. @default 'never' */
    autoMode: z.enum(['always', 'never', 'voice_reply', 'inbound_media']).default('never'),
    /** `keyless` uses espeak-ng; `keyed` the provider; `auto` the provider when set, else espeak-ng. @default 'auto' */
    order: z.enum(['auto', 'keyless', 'keyed']).default('auto'),
    /** espeak-ng voice (or the provider's voice name). @default 'en-us' */
    voice: z.string().min(1).max(100).default('en-us'),
    /** espeak-ng program. @default 'espeak-ng' */
    espeakCommand: z.string().min(1).default('espeak-ng'),
    /** OpenAI-compatible `/audio/speech` provider. */
    provider: httpProviderSchema.optional(),
    /** Channel types whose voice notes are Opus (OGG); everyone else gets MP3. @default ['telegram','whatsapp'] */
    opusChannels: z.array(z.string().min(1).max(64)).max(50).default(['telegram', 'whatsapp']),
    /** Longest text synthesized at once, in characters. @default 4000 */
    maxChars: z.number().int().min(1).max(100_000).default(4000),
    /** Age after which files under `media/tts/` are removed, in ms. @default 3600000 */
    fileTtlMs: z
      .number()
      .int()
      .min(1000)
      .max(7 * 24 * 3_600_000)
      .default(3_600_000),
  })
  .strict();

const scopeRuleSchema = z
  .object({
    /** Channel type the rule applies to (`telegram`, `webchat`, ...); any when absent. */
    channelType: z.string().min(1).max(64).optional(),
    /** Channel id the rule applies to; any when absent. */
    channelId: z.string().min(1).max(256).optional(),
    /** `deny` refuses image analysis in matching contexts. */
    action: z.enum(['allow', 'deny']),
  })
  .strict();

const visionSchema = z
  .object({
    /** Vision-capable chat provider; `format` picks the wire format. */
    provider: httpProviderSchema
      .extend({ format: z.enum(['openai', 'anthropic']).default('openai') })
      .optional(),
    /** The provider takes several frames of a video in one request (`media.describe_video`). @default false */
    videoCapable: z.boolean().default(false),
    /** First matching rule wins; no match allows. @default [] */
    scopeRules: z.array(scopeRuleSchema).max(200).default([]),
    /** Frames sent for a video. @default 4 */
    videoFrames: z.number().int().min(1).max(16).default(4),
    /**
     * `auto`: the provider when one is set, else the keyless engine (tesseract OCR and ffmpeg
     * image facts). `keyed`: only the provider. `keyless`: only the local engine. @default 'auto'
     */
    order: z.enum(['auto', 'keyless', 'keyed']).default('auto'),
    /** tesseract program of the keyless engine. @default 'tesseract' */
    tesseractCommand: z.string().min(1).default('tesseract'),
    /** Tesseract language(s) read, `eng` or `eng+deu` (each needs its `tesseract-ocr-<lang>` package). @default 'eng' */
    ocrLanguage: z
      .string()
      .regex(/^[a-z]{3}(_[a-z]+){0,2}(\+[a-z]{3}(_[a-z]+){0,2}){0,4}$/)
      .default('eng'),
    /**
     * `media.describe_video` without a video-capable provider reads text and image facts from
     * the frames with the keyless engine instead of answering not configured. @default false
     */
    keylessVideo: z.boolean().default(false),
  })
  .strict();

const imageGenSchema = z
  .object({
    /** OpenAI-compatible `/images/generations` provider. */
    provider: httpProviderSchema.optional(),
    /** Images one agent may generate per rolling hour. @default 20 */
    maxPerHour: z.number().int().min(0).max(10_000).default(20),
    /** Size requested. @default '1024x1024' */
    size: z
      .string()
      .regex(/^\d{2,5}x\d{2,5}$/)
      .default('1024x1024'),
  })
  .strict();

const linksSchema = z
  .object({
    /** Let `link.process` reach loopback, private and link-local addresses. @default false */
    allowPrivateNetwork: z.boolean().default(false),
    /** Hosts (`host` or `host:port`) exempt from the private-address check. @default [] */
    allowedHosts: z.array(z.string().min(1).max(300)).max(1000).default([]),
    /** URLs fetched from one text. @default 5 */
    maxLinks: z.number().int().min(1).max(50).default(5),
    /** Largest body read per URL, in bytes. @default 2097152 */
    maxBytes: byteLimit(64 * MB, 2 * MB),
    /** Deadline per URL, redirects included, in ms. @default 15000 */
    timeoutMs: z.number().int().min(100).max(120_000).default(15_000),
    /** Redirect hops followed (each re-checked). @default 5 */
    maxRedirects: z.number().int().min(0).max(20).default(5),
    /** Summaries written by the `vision.provider` chat model instead of extractive ones. @default false */
    modelSummary: z.boolean().default(false),
    /** Characters of article text kept per link. @default 20000 */
    maxChars: z.number().int().min(100).max(1_000_000).default(20_000),
  })
  .strict();

/**
 * The `media` section of the agentd config file. `MediaService.applyConfig` replaces it in
 * place: the next call uses the new engines, providers and limits.
 */
export const mediaSectionSchema = z
  .object({
    /** Largest decoded input (audio, image, document, video) in bytes. @default 26214400 */
    maxInputBytes: byteLimit(512 * MB, 25 * MB),
    /** Deadline of one local engine run or provider request, in ms. @default 120000 */
    timeoutMs: z.number().int().min(1000).max(1_800_000).default(120_000),
    /** ffmpeg program (ffprobe is looked up beside it by name). @default 'ffmpeg' */
    ffmpegCommand: z.string().min(1).default('ffmpeg'),
    /** Characters a document extraction keeps before it sets `truncated`. @default 200000 */
    documentMaxChars: z.number().int().min(100).max(10_000_000).default(200_000),
    stt: sttSchema.default(sttSchema.parse({})),
    tts: ttsSchema.default(ttsSchema.parse({})),
    vision: visionSchema.default(visionSchema.parse({})),
    imageGen: imageGenSchema.default(imageGenSchema.parse({})),
    links: linksSchema.default(linksSchema.parse({})),
  })
  .strict();

/** The parsed `media` config section (defaults filled in). */
export type MediaSection = z.output<typeof mediaSectionSchema>;

/** The `media` section as written (every key optional). */
export type MediaSectionInput = z.input<typeof mediaSectionSchema>;

/** Resolves a host name to all its IP addresses; used by the private-address check. */
export type ResolveHost = (hostname: string) => Promise<string[]>;

/** Options for {@link createMediaService}: the `media` section plus what the host injects. */
export interface MediaServiceOptions {
  /** The `media` config section, secrets already resolved. @default {} */
  section?: MediaSectionInput | undefined;
  /**
   * Directory synthesized speech is written under, per agent (`<dir>/media/tts/`). The host
   * swaps in the agent's workspace root once workspaces exist.
   * @default `<os tmpdir>/agentd-media/<agentId>`
   */
  agentDir?: ((agentId: string) => string) | undefined;
  /**
   * Reads a file of an agent's workspace for `image.analyze { path }`; absent, paths are
   * refused. `maxBytes` is `media.maxInputBytes`: a reader should refuse a larger file before
   * reading it (`readConfinedFile` does); the service checks the length again either way.
   */
  readWorkspaceFile?: ((agentId: string, path: string, maxBytes: number) => Promise<Buffer>) | undefined;
  /** The daemon's main model provider, for `stt.followMainKey`; undefined when it has none. */
  mainProvider?: (() => HttpProvider | undefined) | undefined;
  /**
   * Sends a generated image to the channel that asked for it (`_callerChannelType` and
   * `_callerChannelId`); the channels package provides it. Absent, images are returned as base64.
   */
  deliverImage?:
    | ((
        target: { channelType: string; channelId: string },
        image: { mimeType: string; data: string; caption?: string | undefined },
      ) => Promise<{ messageId?: string | undefined }>)
    | undefined;
  /** Receives `voice:turn` evidence (content-free). */
  events?: EventSink | undefined;
  /** Logger (pino-compatible). @default a no-op logger */
  logger?: MediaLogger | undefined;
  /** Clock. @default Date.now */
  now?: (() => number) | undefined;
  /** Host resolution for the private-address check. @default `dns.lookup` with `all: true` */
  resolveHost?: ResolveHost | undefined;
  /** Environment for engine lookups (`PATH`). @default process.env */
  env?: NodeJS.ProcessEnv | undefined;
}
