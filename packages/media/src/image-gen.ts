import { SlidingWindowLimiter } from '@agentd/auth-scopes';
import { MediaError } from './errors.js';
import type { CallScope, MediaContext } from './internal/context.js';
import { jsonOf, postProvider } from './internal/http-provider.js';

/** A generated image: base64 bytes (or the provider's URL when it only gives one). */
export interface GeneratedImage {
  mimeType: string;
  data?: string | undefined;
  url?: string | undefined;
  revisedPrompt?: string | undefined;
  engine: string;
  model?: string | undefined;
}

const HOUR_MS = 3_600_000;

/**
 * Per-agent rolling-hour limit of `imageGen.maxPerHour`: one auth-scopes sliding-window limiter
 * per agent. A changed limit starts that agent's window afresh; a limit of 0 refuses every call.
 */
export function createHourlyLimiter(now: () => number) {
  const windows = new Map<string, SlidingWindowLimiter>();
  return {
    /** Takes one slot for `agentId`, or throws `RATE_LIMITED` when the hour is full. */
    take(agentId: string, limit: number): void {
      let window = windows.get(agentId);
      if (limit > 0 && window?.maxEvents !== limit) {
        window = new SlidingWindowLimiter({ maxEvents: limit, windowMs: HOUR_MS, now });
        windows.set(agentId, window);
      }
      if (window !== undefined && limit > 0 && window.tryAcquire()) return;
      throw new MediaError(
        'RATE_LIMITED',
        `image generation limit reached: ${limit} per hour for agent ${agentId}`,
        {
          data: { limit, agentId, ...(window ? { retryAfterMs: Math.ceil(window.retryAfterMs()) } : {}) },
        },
      );
    },
  };
}

/**
 * Generates one image through the OpenAI-compatible `/images/generations` endpoint, counting
 * against the agent's hourly limit only once the provider is known to be configured.
 */
export async function generateImage(
  context: MediaContext,
  limiter: ReturnType<typeof createHourlyLimiter>,
  input: CallScope & { prompt: string; size?: string | undefined },
): Promise<GeneratedImage> {
  const section = context.section().imageGen;
  const provider = section.provider;
  if (!provider)
    throw new MediaError(
      'NOT_CONFIGURED',
      'image generation is not configured: set media.imageGen.provider (an OpenAI-compatible endpoint)',
    );
  limiter.take(input.agentId ?? 'default', section.maxPerHour);
  const model = provider.model ?? 'dall-e-3';
  const response = await postProvider(
    provider,
    '/images/generations',
    JSON.stringify({
      model,
      prompt: input.prompt,
      n: 1,
      size: input.size ?? section.size,
      response_format: 'b64_json',
    }),
    { timeoutMs: context.section().timeoutMs, signal: input.signal, json: true },
  );
  const body = await jsonOf(provider, response);
  const first = Array.isArray(body.data) ? (body.data[0] as Record<string, unknown> | undefined) : undefined;
  const data = typeof first?.b64_json === 'string' ? first.b64_json : undefined;
  const url = typeof first?.url === 'string' ? first.url : undefined;
  if (!data && !url)
    throw new MediaError('PROVIDER_FAILED', `provider ${provider.id} answered without an image`, {
      data: { provider: provider.id, errorKind: 'network' },
    });
  return {
    mimeType: 'image/png',
    ...(data ? { data } : { url }),
    ...(typeof first?.revised_prompt === 'string' ? { revisedPrompt: first.revised_prompt } : {}),
    engine: provider.id,
    model,
  };
}
