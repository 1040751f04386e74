import { isMediaError, MediaError } from './errors.js';
import { type LinkOptions, type LinkResult, processLinks, readLink } from './links.js';
import type { MediaService } from './media-service.js';

/** The outcome of one `media.test.*` round trip. */
export interface MediaTestResult {
  ok: boolean;
  engine?: string | undefined;
  durationMs: number;
  /** What the engine produced (text, description, sizes), on success. */
  result?: Record<string, unknown> | undefined;
  /** Why it failed, with the package's error code. */
  error?: string | undefined;
  code?: string | undefined;
}

/** What the test runs need besides the service. */
interface TestDeps {
  now: () => number;
  bytesOf: (data: string, field: string) => Uint8Array;
  linkOptions: (signal?: AbortSignal) => LinkOptions;
}

/**
 * The `media.test.*` round trips: each runs the real operation on the given input and reports
 * engine, duration and outcome instead of throwing (malformed params still throw).
 */
export function createTestRuns(service: () => MediaService, deps: TestDeps): MediaService['test'] {
  const { now, bytesOf, linkOptions } = deps;
  return {
    stt: (params, scope) =>
      timed(now, async () => {
        const transcript = await service().transcribe(
          { data: params.data, language: params.language },
          scope,
        );
        return {
          engine: transcript.engine,
          result: { text: transcript.text, audioMs: transcript.durationMs, mimeType: transcript.mimeType },
        };
      }),
    tts: (params, scope) =>
      timed(now, async () => {
        const text = params.text ?? 'This is the agentd text to speech test.';
        const spoken = await service().synthesize(
          { text, voice: params.voice, agentId: 'media-test' },
          scope,
        );
        return {
          engine: spoken.engine,
          result: {
            path: spoken.path,
            mimeType: spoken.mimeType,
            bytes: spoken.bytes,
            durationMs: spoken.durationMs,
          },
        };
      }),
    vision: (params, scope) =>
      timed(now, async () => {
        const answer = await service().analyzeImage({ image: params.data, prompt: params.prompt }, scope);
        return {
          engine: answer.engine,
          result: { description: answer.description, mimeType: answer.mimeType },
        };
      }),
    document: (params) =>
      timed(now, async () => {
        const document = await service().extractDocument(params);
        return {
          engine:
            document.mimeType === 'application/pdf'
              ? 'unpdf'
              : document.mimeType.includes('wordprocessingml')
                ? 'mammoth'
                : 'text',
          result: {
            chars: document.totalChars,
            truncated: document.truncated,
            mimeType: document.mimeType,
            preview: document.text.slice(0, 200),
          },
        };
      }),
    video: (params, scope) =>
      timed(now, async () => {
        const video = await service().describeVideo(params, scope);
        return {
          engine: video.engine,
          result: { description: video.description, frames: video.frames, durationMs: video.durationMs },
        };
      }),
    link: (params, scope = {}) =>
      timed(now, async () => {
        const text = params.url ?? Buffer.from(bytesOf(params.data as string, 'data')).toString('utf8');
        const links: LinkResult[] = params.url
          ? [await readLink(params.url, linkOptions(scope.signal))]
          : (await processLinks(text, linkOptions(scope.signal))).links;
        if (links.length === 0)
          throw new MediaError('INVALID_INPUT', 'data holds no http(s) URL', { data: { field: 'data' } });
        const failed = links.find((link) => !link.ok);
        if (failed && !failed.ok) throw new MediaError(failed.code, failed.error);
        return {
          engine: 'readability',
          result: {
            links: links.map((link) =>
              link.ok ? { url: link.finalUrl, title: link.title, chars: link.text.length } : link,
            ),
          },
        };
      }),
  };
}

/** Runs one test round trip and reports it; failures are reported, programming errors rethrown. */
async function timed(
  now: () => number,
  work: () => Promise<{ engine: string; result: Record<string, unknown> }>,
): Promise<MediaTestResult> {
  const started = now();
  try {
    const { engine, result } = await work();
    return { ok: true, engine, durationMs: now() - started, result };
  } catch (error) {
    // Malformed params are the caller's error (-32602 in the daemon), not a failed round trip.
    if (!isMediaError(error) || error.code === 'INVALID_INPUT' || error.code === 'TOO_LARGE') throw error;
    return { ok: false, durationMs: now() - started, error: error.message, code: error.code };
  }
}
