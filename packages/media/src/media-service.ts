import { firstIssueText } from '@agentd/errors';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { z } from 'zod';
import { type DocumentText, extractDocument } from './documents.js';
import { MediaError } from './errors.js';
import { createHourlyLimiter, type GeneratedImage, generateImage } from './image-gen.js';
import { createAddressPolicy } from '@agentd/input-guards';
import type { CallScope, MediaContext } from './internal/context.js';
import { guardedFetch } from './internal/guarded-fetch.js';
import { decodeBase64 } from './internal/input.js';
import { type LinkProcessResult, processLinks } from './links.js';
import { createTestRuns, type MediaTestResult } from './media-tests.js';
import { noopLogger } from './logger.js';
import { type MediaSection, type MediaServiceOptions, mediaSectionSchema } from './options.js';
import type { mediaParamSchemas } from './params.js';
import { listProviders, type ProvidersReport } from './providers.js';
import { type Transcript, transcribe } from './stt.js';
import { type AutoCheck, autoCheck, type Synthesis, sweepDir, synthesize, TTS_DIR } from './tts.js';
import {
  analyzeImage,
  describeVideo,
  summarizeWithModel,
  type VideoDescription,
  type VisionAnswer,
} from './vision.js';

type Params<K extends keyof typeof mediaParamSchemas> = z.output<(typeof mediaParamSchemas)[K]>;

/** Speech, vision, image generation, documents, video and links for one daemon. */
export interface MediaService {
  transcribe(
    params: { data: string; language?: string | undefined; field?: string },
    scope?: CallScope,
  ): Promise<Transcript>;
  synthesize(params: Params<'synthesize'>, scope?: CallScope): Promise<Synthesis>;
  autoCheck(params: Params<'autoCheck'>): AutoCheck;
  analyzeImage(
    params: Params<'imageAnalyze'>,
    scope?: CallScope,
  ): Promise<VisionAnswer & { mimeType: string }>;
  /**
   * Generates an image; with `_callerChannelType`/`_callerChannelId` and a `deliverImage`
   * host hook it is sent there and answered as `{ delivered: true, … }` without the bytes.
   */
  generateImage(
    params: Params<'imageGenerate'>,
    scope?: CallScope,
  ): Promise<
    GeneratedImage | (Omit<GeneratedImage, 'data'> & { delivered: true; messageId?: string | undefined })
  >;
  processLinks(params: Params<'linkProcess'>, scope?: CallScope): Promise<LinkProcessResult>;
  extractDocument(params: Params<'mediaData'>): Promise<DocumentText>;
  describeVideo(params: Params<'describeVideo'>, scope?: CallScope): Promise<VideoDescription>;
  /** Each capability's engines: keyless found or not, keyed configured or not (never a key). */
  providers(): Promise<ProvidersReport>;
  /** One real round trip per capability, reported rather than thrown. */
  test: {
    stt(params: Params<'mediaData'>, scope?: CallScope): Promise<MediaTestResult>;
    tts(params: Params<'testTts'>, scope?: CallScope): Promise<MediaTestResult>;
    vision(params: Params<'testVision'>, scope?: CallScope): Promise<MediaTestResult>;
    document(params: Params<'mediaData'>): Promise<MediaTestResult>;
    video(params: Params<'describeVideo'>, scope?: CallScope): Promise<MediaTestResult>;
    link(params: Params<'testLink'>, scope?: CallScope): Promise<MediaTestResult>;
  };
  /** Replaces the `media` section; the next call uses it. */
  applyConfig(section: unknown): void;
  /** Removes synthesized files older than `tts.fileTtlMs` in every agent directory used so far. */
  sweep(): Promise<number>;
  /** Stops the periodic sweep. */
  close(): void;
}

function parseSection(section: unknown): MediaSection {
  const parsed = mediaSectionSchema.safeParse(section ?? {});
  if (!parsed.success) {
    throw new MediaError(
      'INVALID_OPTIONS',
      firstIssueText('invalid media section at ', parsed.error.issues, '<root>'),
      {
        data: { issues: parsed.error.issues },
      },
    );
  }
  return parsed.data;
}

/**
 * Creates the media service. Nothing runs at creation: engines are spawned per call, and a
 * timer (unref'd) sweeps old synthesized speech every ten minutes.
 */
export function createMediaService(options: MediaServiceOptions = {}): MediaService {
  let section = parseSection(options.section);
  const now = options.now ?? Date.now;
  const agentDirs = new Set<string>();
  const agentDir = (agentId: string) => {
    const dir = options.agentDir?.(agentId) ?? join(tmpdir(), 'agentd-media', agentId);
    agentDirs.add(dir);
    return dir;
  };
  const context: MediaContext = {
    section: () => section,
    logger: options.logger ?? noopLogger,
    events: options.events,
    now,
    env: options.env ?? process.env,
    mainProvider: options.mainProvider ?? (() => undefined),
    agentDir,
  };
  const limiter = createHourlyLimiter(now);
  const linkCheck = () =>
    createAddressPolicy({
      allowPrivateNetwork: section.links.allowPrivateNetwork,
      allowedHosts: section.links.allowedHosts,
      resolveHost: options.resolveHost,
    });
  const linkOptions = (signal?: AbortSignal) => ({
    ...section.links,
    check: linkCheck(),
    signal,
    ...(section.links.modelSummary && section.vision.provider
      ? { summarize: (text: string, abort?: AbortSignal) => summarizeWithModel(context, text, abort) }
      : {}),
  });
  const bytesOf = (data: string, field: string) => decodeBase64(data, field, section.maxInputBytes).bytes;

  const imageBytes = async (
    params: Params<'imageAnalyze'>,
    scope: CallScope,
  ): Promise<{ bytes: Uint8Array; field: string }> => {
    if (params.image) return { bytes: bytesOf(params.image, 'image'), field: 'image' };
    if (params.url) {
      const page = await guardedFetch(params.url, {
        ...linkOptions(scope.signal),
        maxBytes: section.maxInputBytes,
      });
      return { bytes: page.body, field: 'url' };
    }
    if (!options.readWorkspaceFile)
      throw new MediaError(
        'NOT_CONFIGURED',
        'workspace paths cannot be read: this host has no workspace reader',
        {
          data: { field: 'path' },
        },
      );
    const bytes = await options.readWorkspaceFile(
      params.agentId ?? scope.agentId ?? 'default',
      params.path as string,
      section.maxInputBytes,
    );
    if (bytes.length > section.maxInputBytes)
      throw new MediaError('TOO_LARGE', `path is larger than the ${section.maxInputBytes}-byte limit`, {
        data: { field: 'path' },
      });
    return { bytes, field: 'path' };
  };

  const service: MediaService = {
    transcribe: async (params, scope = {}) =>
      transcribe(context, bytesOf(params.data, params.field ?? 'data'), {
        ...scope,
        language: params.language,
        field: params.field ?? 'data',
      }),
    synthesize: async (params, scope = {}) =>
      synthesize(context, {
        ...scope,
        text: params.text,
        voice: params.voice,
        format: params.format,
        agentId: params.agentId ?? scope.agentId,
        channelType: params.channelType ?? params._callerChannelType,
      }),
    autoCheck: (params) => autoCheck(context, params),
    async analyzeImage(params, scope = {}) {
      const { bytes, field } = await imageBytes(params, scope);
      return analyzeImage(context, {
        ...scope,
        bytes,
        field,
        prompt: params.prompt,
        // The channel the host injected wins over one the caller claims: a claimed channel
        // must not step around a scope rule that denies the real one.
        channelType: params._callerChannelType ?? params.channelType,
        channelId: params._callerChannelId ?? params.channelId,
      });
    },
    async generateImage(params, scope = {}) {
      const image = await generateImage(context, limiter, {
        ...scope,
        agentId: params.agentId ?? params._agentId ?? scope.agentId,
        prompt: params.prompt,
        size: params.size,
      });
      const channelType = params._callerChannelType;
      const channelId = params._callerChannelId;
      if (!channelType || !channelId || !options.deliverImage || !image.data) return image;
      const { data, ...rest } = image;
      const sent = await options.deliverImage(
        { channelType, channelId },
        { mimeType: image.mimeType, data, caption: params.prompt },
      );
      return { ...rest, delivered: true as const, ...(sent.messageId ? { messageId: sent.messageId } : {}) };
    },
    processLinks: async (params, scope = {}) => processLinks(params.text, linkOptions(scope.signal)),
    extractDocument: async (params) =>
      extractDocument(bytesOf(params.data, 'data'), {
        maxChars: section.documentMaxChars,
        mimeType: params.mimeType,
      }),
    describeVideo: async (params, scope = {}) =>
      describeVideo(context, { ...scope, bytes: bytesOf(params.data, 'data'), prompt: params.prompt }),
    providers: () => listProviders(context),
    test: createTestRuns(() => service, { now, bytesOf, linkOptions }),
    applyConfig(next) {
      section = parseSection(next);
    },
    async sweep() {
      let removed = 0;
      for (const dir of agentDirs)
        removed += await sweepDir(join(dir, TTS_DIR), section.tts.fileTtlMs, now());
      return removed;
    },
    close() {
      clearInterval(timer);
    },
  };
  const timer = setInterval(() => {
    service.sweep().catch(() => {});
  }, 600_000);
  timer.unref();
  return service;
}
