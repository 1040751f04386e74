import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isMediaError, MediaError } from './errors.js';
import { type CallScope, emitVoiceTurn, ffmpegOf, type MediaContext } from './internal/context.js';
import { runProgram } from './internal/exec.js';
import { encodeAudio } from './internal/ffmpeg.js';
import { bodyOf, postProvider } from './internal/http-provider.js';

/** Where synthesized speech goes, below the agent's directory. */
export const TTS_DIR = join('media', 'tts');

/** A synthesized audio file. */
export interface Synthesis {
  /** Path relative to the agent's directory (workspace), e.g. `media/tts/tts-….ogg`. */
  path: string;
  /** The same file as an absolute path, for the host (a channel attaching it). */
  absolutePath: string;
  mimeType: 'audio/ogg' | 'audio/mpeg';
  durationMs?: number | undefined;
  voice: string;
  engine: string;
  keyless: boolean;
  bytes: number;
}

const DIRECTIVE = /\[\[tts:([^\]]{0,200})\]\]/gi;
const VOICE = /^[A-Za-z0-9_+.-]{1,64}$/;

/** Text with its `[[tts:…]]` directives removed, and the voice the last one chose. */
export function stripDirectives(text: string): { text: string; voice?: string | undefined } {
  let voice: string | undefined;
  const stripped = text.replace(DIRECTIVE, (_match, body: string) => {
    for (const pair of body.split(/[;,\s]+/)) {
      const [key, value] = pair.split('=', 2);
      if (key?.trim().toLowerCase() === 'voice' && value && VOICE.test(value.trim())) voice = value.trim();
    }
    return '';
  });
  return { text: stripped.replace(/[ \t]{2,}/g, ' ').trim(), voice };
}

/** What `tts.auto_check` decides. */
export interface AutoCheck {
  shouldSynthesize: boolean;
  mode: string;
  strippedText: string;
  voice?: string | undefined;
}

/**
 * Whether a response should be spoken, by `tts.autoMode`: `always`, `never`, `voice_reply`
 * (only in answer to inbound audio) or `inbound_media` (inbound audio or any media). Text
 * that is empty once its directives are stripped is never spoken.
 */
export function autoCheck(
  context: MediaContext,
  input: { text: string; inboundAudio?: boolean | undefined; inboundMedia?: boolean | undefined },
): AutoCheck {
  const mode = context.section().tts.autoMode;
  const { text, voice } = stripDirectives(input.text);
  const wanted =
    mode === 'always' ||
    (mode === 'voice_reply' && input.inboundAudio === true) ||
    (mode === 'inbound_media' && (input.inboundAudio === true || input.inboundMedia === true));
  return {
    shouldSynthesize: wanted && text.length > 0,
    mode,
    strippedText: text,
    ...(voice ? { voice } : {}),
  };
}

/** Duration of a RIFF WAV from its sample rate and size (espeak-ng streams a bogus length field). */
function wavDurationMs(wav: Buffer): number | undefined {
  if (wav.length < 44 || wav.toString('latin1', 0, 4) !== 'RIFF') return undefined;
  const byteRate = wav.readUInt32LE(28);
  return byteRate > 0 ? Math.round(((wav.length - 44) / byteRate) * 1000) : undefined;
}

/** Removes files under `dir` older than `ttlMs`; returns how many went. */
export async function sweepDir(dir: string, ttlMs: number, now: number): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const path = join(dir, name);
    const info = await stat(path).catch(() => undefined);
    if (info?.isFile() && now - info.mtimeMs > ttlMs) {
      await rm(path, { force: true });
      removed += 1;
    }
  }
  return removed;
}

/**
 * Speaks `text` (directives stripped; a `[[tts:voice=…]]` directive beats `voice`) with the
 * configured provider or espeak-ng, as Opus-in-OGG for the `opusChannels` and MP3 otherwise,
 * into `<agent dir>/media/tts/` (0700 directory, 0600 file). Files older than `fileTtlMs`
 * there are swept first. One `voice:turn` event per call.
 */
export async function synthesize(
  context: MediaContext,
  input: CallScope & {
    text: string;
    voice?: string | undefined;
    channelType?: string | undefined;
    format?: 'opus' | 'mp3' | undefined;
  },
): Promise<Synthesis> {
  const tts = context.section().tts;
  const { text, voice: directiveVoice } = stripDirectives(input.text);
  if (text.length === 0)
    throw new MediaError('INVALID_INPUT', 'text is empty once directives are stripped', {
      data: { field: 'text' },
    });
  if (text.length > tts.maxChars)
    throw new MediaError('TOO_LARGE', `text is longer than ${tts.maxChars} characters`, {
      data: { field: 'text', maxChars: tts.maxChars },
    });
  const voice = directiveVoice ?? input.voice ?? tts.voice;
  const format =
    input.format ?? (input.channelType && tts.opusChannels.includes(input.channelType) ? 'opus' : 'mp3');
  const useProvider = tts.provider && tts.order !== 'keyless';
  if (tts.order === 'keyed' && !tts.provider)
    throw new MediaError(
      'NOT_CONFIGURED',
      'text-to-speech is set to keyed but media.tts.provider is not configured',
    );
  const engine = useProvider ? (tts.provider?.id ?? 'openai') : 'espeak-ng';
  const started = context.now();
  const agentId = input.agentId ?? 'default';
  try {
    let audio: Buffer;
    let durationMs: number | undefined;
    if (useProvider && tts.provider) {
      const response = await postProvider(
        tts.provider,
        '/audio/speech',
        JSON.stringify({ model: tts.provider.model ?? 'tts-1', input: text, voice, response_format: format }),
        { timeoutMs: context.section().timeoutMs, signal: input.signal, json: true },
      );
      audio = await bodyOf(tts.provider, response);
    } else {
      // Text goes through stdin: as an argument, text starting with '-' would read as an option.
      const { stdout: wav } = await runProgram(tts.espeakCommand, ['-v', voice, '--stdout'], {
        timeoutMs: context.section().timeoutMs,
        signal: input.signal,
        input: Buffer.from(text, 'utf8'),
        env: context.env,
      }).catch((error: unknown) => {
        // An unknown voice is the caller's mistake, not a broken engine.
        if (isMediaError(error, 'ENGINE_FAILED') && /voice does not exist/i.test(String(error.data?.stderr)))
          throw new MediaError(
            'INVALID_INPUT',
            `voice ${voice} is not an espeak-ng voice (espeak-ng --voices lists them)`,
            {
              data: { field: 'voice' },
            },
          );
        throw error;
      });
      durationMs = wavDurationMs(wav);
      audio = await encodeAudio(wav, format, ffmpegOf(context, input.signal));
    }
    const dir = join(context.agentDir(agentId), TTS_DIR);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await sweepDir(dir, tts.fileTtlMs, context.now());
    const name = `tts-${context.now()}-${randomBytes(4).toString('hex')}.${format === 'opus' ? 'ogg' : 'mp3'}`;
    const absolutePath = join(dir, name);
    await writeFile(absolutePath, audio, { mode: 0o600 });
    emitVoiceTurn(context, input, {
      operation: 'tts',
      provider: engine,
      keyless: !useProvider,
      source: useProvider ? 'explicit' : 'keyless-local',
      model: useProvider ? tts.provider?.model : undefined,
      durationMs: context.now() - started,
    });
    return {
      path: join(TTS_DIR, name),
      absolutePath,
      mimeType: format === 'opus' ? 'audio/ogg' : 'audio/mpeg',
      ...(durationMs === undefined ? {} : { durationMs }),
      voice,
      engine,
      keyless: !useProvider,
      bytes: audio.length,
    };
  } catch (error) {
    emitVoiceTurn(context, input, {
      operation: 'tts',
      provider: engine,
      keyless: !useProvider,
      source: useProvider ? 'explicit' : 'keyless-local',
      durationMs: context.now() - started,
      error,
    });
    throw error;
  }
}
