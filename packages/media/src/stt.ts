import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MediaError } from './errors.js';
import { type CallScope, emitVoiceTurn, ffmpegOf, type MediaContext } from './internal/context.js';
import { runProgram } from './internal/exec.js';
import { toSpeechWav, withScratch } from './internal/ffmpeg.js';
import { jsonOf, postProvider } from './internal/http-provider.js';
import { mayHoldAudio, sniffMime } from './internal/sniff.js';
import type { HttpProvider } from './options.js';

/** A transcription. */
export interface Transcript {
  text: string;
  language?: string | undefined;
  /** Length of the audio, in ms. */
  durationMs: number;
  /** Engine that produced the text (`pocketsphinx`, `whisper.cpp` or a provider id). */
  engine: string;
  keyless: boolean;
  /** MIME type sniffed from the bytes. */
  mimeType: string;
}

/** One engine in the order `transcribe` tries them. */
interface SttEngine {
  name: string;
  keyless: boolean;
  source: 'keyless-local' | 'follow-main-key' | 'fallback' | 'explicit';
  model?: string | undefined;
  run(wav: Buffer, language: string | undefined, signal?: AbortSignal): Promise<string>;
}

function keylessEngine(context: MediaContext): SttEngine {
  const stt = context.section().stt;
  const timeoutMs = context.section().timeoutMs;
  /** A local program run on a private scratch copy of the speech; its answer is what it prints. */
  const local = (
    name: string,
    command: string,
    argsFor: (path: string, language: string | undefined) => string[],
  ): SttEngine => ({
    name,
    keyless: true,
    source: 'keyless-local',
    run: (wav, language, signal) =>
      withScratch(async (dir) => {
        const path = join(dir, 'speech.wav');
        await writeFile(path, wav, { mode: 0o600 });
        const args = argsFor(path, language);
        const { stdout } = await runProgram(command, args, { timeoutMs, signal, env: context.env });
        return stdout.toString('utf8');
      }),
  });
  if (stt.whisperCommand && stt.whisperModel) {
    const model = stt.whisperModel;
    const args = (path: string, language = 'auto') => ['-m', model, '-f', path, '-nt', '-np', '-l', language];
    return local('whisper.cpp', stt.whisperCommand, args);
  }
  // pocketsphinx_continuous uses the model pocketsphinx-en-us installs (no language); its log goes nowhere.
  return local('pocketsphinx', stt.pocketsphinxCommand, (path) => ['-infile', path, '-logfn', '/dev/null']);
}

function keyedEngine(context: MediaContext, provider: HttpProvider, source: SttEngine['source']): SttEngine {
  const model = provider.model ?? 'whisper-1';
  return {
    name: provider.id,
    keyless: false,
    source,
    model,
    async run(wav, language, signal) {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), 'speech.wav');
      form.append('model', model);
      if (language) form.append('language', language);
      const response = await postProvider(provider, '/audio/transcriptions', form, {
        timeoutMs: context.section().timeoutMs,
        signal,
      });
      const body = await jsonOf(provider, response);
      if (typeof body.text !== 'string')
        throw new MediaError('PROVIDER_FAILED', `provider ${provider.id} answered without text`, {
          data: { provider: provider.id, errorKind: 'network' },
        });
      return body.text;
    },
  };
}

/**
 * The engines `transcribe` tries, in the configured order: `auto` is keyless first (when
 * the language is one its model speaks), then the main provider's key, then the fallbacks.
 */
function engineOrder(context: MediaContext, language: string | undefined): SttEngine[] {
  const stt = context.section().stt;
  const keylessSpeaks =
    !language ||
    Boolean(stt.whisperCommand && stt.whisperModel) ||
    language.toLowerCase().startsWith(stt.keylessLanguage.toLowerCase());
  const keyed: SttEngine[] = [];
  const main = stt.followMainKey ? context.mainProvider() : undefined;
  if (main) keyed.push(keyedEngine(context, main, 'follow-main-key'));
  for (const provider of stt.fallbacks)
    keyed.push(keyedEngine(context, provider, stt.order === 'keyed' ? 'explicit' : 'fallback'));
  if (stt.order === 'keyed') return keyed;
  const keyless = keylessSpeaks ? [keylessEngine(context)] : [];
  return stt.order === 'keyless' ? keyless : [...keyless, ...keyed];
}

/**
 * Transcribes audio of any container ffmpeg reads: the bytes are sniffed (a non-audio file is
 * refused before any engine runs), normalised to 16 kHz mono WAV, then handed to each engine
 * in order until one answers. Every attempt is one `voice:turn` event. With no engine at all
 * the error is `NOT_CONFIGURED` (voice errorKind `no_keyless_engine`) saying how to get one.
 */
export async function transcribe(
  context: MediaContext,
  bytes: Uint8Array,
  options: CallScope & { language?: string | undefined; field?: string },
): Promise<Transcript> {
  const field = options.field ?? 'audio';
  const sniffed = await sniffMime(bytes);
  if (!mayHoldAudio(sniffed.mimeType))
    throw new MediaError('UNSUPPORTED_TYPE', `${field} is ${sniffed.mimeType}, not audio`, {
      data: { field, detected: sniffed.mimeType },
    });
  const engines = engineOrder(context, options.language);
  if (engines.length === 0) {
    const error = new MediaError(
      'NOT_CONFIGURED',
      `no_keyless_engine: speech-to-text is not configured${options.language ? ` for language ${options.language}` : ''}; install the keyless engine (apt-get install -y pocketsphinx pocketsphinx-en-us) or add a provider under media.stt.fallbacks`,
    );
    emitVoiceTurn(context, options, {
      operation: 'stt',
      provider: 'none',
      keyless: true,
      source: 'keyless-local',
      durationMs: 0,
      error,
    });
    throw error;
  }
  const { wav, durationMs } = await toSpeechWav(
    bytes,
    ffmpegOf(context, options.signal),
    field,
    context.section().stt.maxSeconds,
  );
  let lastError: unknown;
  for (const engine of engines) {
    const started = context.now();
    try {
      const raw = await engine.run(wav, options.language, options.signal);
      const text = raw.replace(/\s+/g, ' ').trim();
      emitVoiceTurn(context, options, {
        operation: 'stt',
        ...engine,
        provider: engine.name,
        durationMs: context.now() - started,
      });
      return {
        text,
        ...(options.language ? { language: options.language } : {}),
        durationMs,
        engine: engine.name,
        keyless: engine.keyless,
        mimeType: sniffed.mimeType,
      };
    } catch (error) {
      lastError = error;
      emitVoiceTurn(context, options, {
        operation: 'stt',
        ...engine,
        provider: engine.name,
        durationMs: context.now() - started,
        error,
      });
      context.logger.warn(
        {
          engine: engine.name,
          err: error,
          errorKind: 'dependency',
          hint: 'the next speech-to-text engine is tried; check the engine named here',
        },
        'speech-to-text engine failed',
      );
    }
  }
  throw lastError;
}
