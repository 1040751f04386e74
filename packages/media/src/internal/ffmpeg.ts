import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isMediaError, MediaError } from '../errors.js';
import { runProgram } from './exec.js';

/** Where and how long ffmpeg may run. */
export interface FfmpegContext {
  command: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}

const QUIET = ['-nostdin', '-hide_banner', '-loglevel', 'error'];
// Input is hostile: a container or playlist could point ffmpeg at URLs or other protocols.
// Only the scratch file and pipes may be opened.
const LOCAL_ONLY = ['-protocol_whitelist', 'file,pipe'];

/**
 * Largest picture or video frame decoded, in pixels. ffmpeg and ffprobe are told so
 * (`-max_pixels`) before they decode anything: a small, highly compressed PNG or video can
 * declare 60000×60000 pixels and would otherwise take gigabytes to decode.
 */
export const MAX_PIXELS = 40_000_000;
const PIXEL_CAP = ['-max_pixels', String(MAX_PIXELS)];

/**
 * `TOO_LARGE` when ffmpeg's diagnostics say the input declared more than {@link MAX_PIXELS}:
 * "Picture size WxH exceeds specified max pixel count" (over `-max_pixels`) or "Picture size
 * WxH is invalid" (over its own limit). Otherwise nothing.
 */
export function pixelLimitError(diagnostics: string, field: string): MediaError | undefined {
  const size = /Picture size (\d+)x(\d+)/.exec(diagnostics);
  if (!size || Number(size[1]) * Number(size[2]) <= MAX_PIXELS) return undefined;
  return new MediaError('TOO_LARGE', `${field} has more than ${MAX_PIXELS} pixels`, {
    data: { field, maxPixels: MAX_PIXELS },
  });
}

/**
 * A private scratch directory (0700, as mkdtemp makes it) removed after `work`, so inputs
 * never linger on disk. Containers such as MP4/M4A need a seekable file, not a pipe.
 */
export async function withScratch<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'agentd-media-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** ffprobe lives beside ffmpeg: `/opt/ff/ffmpeg` → `/opt/ff/ffprobe`, `ffmpeg` → `ffprobe`. */
export function probeCommand(ffmpeg: string): string {
  return ffmpeg.includes('/') ? join(dirname(ffmpeg), 'ffprobe') : 'ffprobe';
}

/** ffmpeg refusing the input means the bytes are not decodable media of that kind. */
function corrupt(error: unknown, field: string, what: string): never {
  const overPixels = isMediaError(error) && pixelLimitError(String(error.data?.stderr ?? ''), field);
  if (overPixels) throw overPixels;
  if (isMediaError(error, 'ENGINE_FAILED'))
    throw new MediaError('CORRUPT_INPUT', `${field} could not be decoded as ${what}`, {
      data: { field },
      cause: error,
    });
  throw error;
}

/**
 * Any audio (or the audio track of a video) as 16 kHz mono 16-bit WAV, the format speech
 * engines take: OGG/Opus voice notes, MP3, M4A, WebM, WAV alike. Returns the WAV and its length.
 * Decoding stops past `maxSeconds` (`TOO_LARGE`): a small file can hold hours (Opus at 6 kbit/s
 * fits ten hours in 25 MiB), each hour is 115 MB of WAV, and the WAV is read whole.
 */
export async function toSpeechWav(
  bytes: Uint8Array,
  context: FfmpegContext,
  field = 'audio',
  maxSeconds = 3600,
): Promise<{ wav: Buffer; durationMs: number }> {
  return withScratch(async (dir) => {
    const input = join(dir, 'input');
    const output = join(dir, 'speech.wav');
    await writeFile(input, bytes, { mode: 0o600 });
    const args = [
      ...QUIET,
      ...LOCAL_ONLY,
      '-i',
      input,
      '-vn',
      '-ac',
      '1',
      '-ar',
      '16000',
      '-c:a',
      'pcm_s16le',
      // One second past the limit, so a longer input is told apart from one exactly at it.
      '-t',
      String(maxSeconds + 1),
      output,
    ];
    await runProgram(context.command, args, context).catch((error) => corrupt(error, field, 'audio'));
    const wav = await readFile(output);
    if (wav.length <= 44)
      throw new MediaError('CORRUPT_INPUT', `${field} holds no audio`, { data: { field } });
    const durationMs = Math.round(((wav.length - 44) / 32_000) * 1000);
    if (durationMs > maxSeconds * 1000)
      throw new MediaError('TOO_LARGE', `${field} is longer than the ${maxSeconds}-second limit`, {
        data: { field, maxSeconds },
      });
    return { wav, durationMs };
  });
}

/** Encodes WAV (from a pipe) as Opus in OGG (voice notes) or MP3. */
export async function encodeAudio(
  wav: Buffer,
  format: 'opus' | 'mp3',
  context: FfmpegContext,
): Promise<Buffer> {
  const codec =
    format === 'opus'
      ? ['-c:a', 'libopus', '-b:a', '32k', '-ar', '48000', '-f', 'ogg']
      : ['-c:a', 'libmp3lame', '-q:a', '4', '-f', 'mp3'];
  const { stdout } = await runProgram(
    context.command,
    [...QUIET, '-i', 'pipe:0', '-ac', '1', ...codec, 'pipe:1'],
    {
      ...context,
      input: wav,
    },
  );
  return stdout;
}

/** Length of a media file in ms (ffprobe), or undefined when the container does not say. */
async function probeDurationMs(path: string, context: FfmpegContext): Promise<number | undefined> {
  const { stdout } = await runProgram(
    probeCommand(context.command),
    ['-v', 'error', ...LOCAL_ONLY, ...PIXEL_CAP, '-show_entries', 'format=duration', '-of', 'csv=p=0', path],
    context,
  );
  const seconds = Number.parseFloat(stdout.toString('utf8').trim());
  return Number.isFinite(seconds) ? Math.round(seconds * 1000) : undefined;
}

/**
 * `count` JPEG frames spread evenly over a video (at 1/(count+1), 2/(count+1), ... of its
 * length, so neither the black first frame nor the fade-out is picked), scaled to at most
 * 768 px wide, with the video's length.
 */
export async function extractFrames(
  bytes: Uint8Array,
  count: number,
  context: FfmpegContext,
  field = 'data',
): Promise<{ frames: Buffer[]; durationMs: number | undefined }> {
  return withScratch(async (dir) => {
    const input = join(dir, 'input');
    await writeFile(input, bytes, { mode: 0o600 });
    const durationMs = await probeDurationMs(input, context).catch((error) => corrupt(error, field, 'video'));
    const seconds = (durationMs ?? 0) / 1000;
    const frames: Buffer[] = [];
    for (let index = 1; index <= count; index += 1) {
      const at = seconds > 0 ? (seconds * index) / (count + 1) : 0;
      const output = join(dir, `frame-${index}.jpg`);
      const args = [
        ...QUIET,
        ...LOCAL_ONLY,
        '-ss',
        at.toFixed(3),
        ...PIXEL_CAP,
        '-i',
        input,
        '-frames:v',
        '1',
        '-vf',
        "scale='min(768,iw)':-2",
        '-q:v',
        '4',
        output,
      ];
      await runProgram(context.command, args, context).catch((error) => corrupt(error, field, 'video'));
      if ((await readdir(dir)).includes(`frame-${index}.jpg`)) frames.push(await readFile(output));
    }
    if (frames.length === 0)
      throw new MediaError('CORRUPT_INPUT', `${field} has no video frames`, { data: { field } });
    return { frames, durationMs };
  });
}
