import type { EventSink } from '@agentd/contracts';
import { isMediaError } from '../errors.js';
import type { MediaLogger } from '../logger.js';
import type { HttpProvider, MediaSection } from '../options.js';
import type { FfmpegContext } from './ffmpeg.js';

/** What every operation of the service reads: the current section and the host's injections. */
export interface MediaContext {
  /** The current `media` section; replaced as a whole by `applyConfig`. */
  section(): MediaSection;
  logger: MediaLogger;
  events: EventSink | undefined;
  now: () => number;
  env: NodeJS.ProcessEnv;
  mainProvider: () => HttpProvider | undefined;
  agentDir: (agentId: string) => string;
}

/** Caller-side identity of one operation, for evidence and per-agent limits. */
export interface CallScope {
  agentId?: string | undefined;
  sessionKey?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** ffmpeg settings of the current section. */
export function ffmpegOf(context: MediaContext, signal?: AbortSignal): FfmpegContext {
  const section = context.section();
  return { command: section.ffmpegCommand, timeoutMs: section.timeoutMs, signal, env: context.env };
}

/** The voice `errorKind` (the contract's closed list) of a failed speech operation. */
export type VoiceErrorKind =
  | 'no_keyless_engine'
  | 'auth_required'
  | 'model_load_failed'
  | 'model_download_failed'
  | 'timeout'
  | 'network'
  | 'dependency';

/** Maps a failure to its voice `errorKind`; input errors (corrupt audio) have none. */
export function voiceErrorKind(error: unknown): VoiceErrorKind | undefined {
  if (!isMediaError(error)) return undefined;
  switch (error.code) {
    case 'NOT_CONFIGURED':
      return 'no_keyless_engine';
    case 'ENGINE_MISSING':
      return 'dependency';
    case 'ENGINE_FAILED':
      return 'model_load_failed';
    case 'TIMEOUT':
      return 'timeout';
    case 'PROVIDER_FAILED':
      return error.data?.errorKind === 'auth_required' ? 'auth_required' : 'network';
    default:
      return undefined;
  }
}

/** One `voice:turn` event: which engine, keyless or not, how it went; never the audio or text. */
export function emitVoiceTurn(
  context: MediaContext,
  scope: CallScope,
  turn: {
    operation: 'stt' | 'tts';
    provider: string;
    keyless: boolean;
    source: 'keyless-local' | 'follow-main-key' | 'fallback' | 'explicit';
    model?: string | undefined;
    durationMs: number;
    error?: unknown;
  },
): void {
  const errorKind = turn.error === undefined ? undefined : voiceErrorKind(turn.error);
  context.events?.emit('voice:turn', {
    operation: turn.operation,
    provider: turn.provider,
    keyless: turn.keyless,
    source: turn.source,
    outcome: turn.error === undefined ? 'ok' : 'failed',
    durationMs: turn.durationMs,
    ...(turn.model ? { model: turn.model } : {}),
    ...(errorKind ? { errorKind } : {}),
    ...(scope.agentId ? { agentId: scope.agentId } : {}),
    ...(scope.sessionKey ? { sessionKey: scope.sessionKey } : {}),
    timestamp: context.now(),
  });
}
