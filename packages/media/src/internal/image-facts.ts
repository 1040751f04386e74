import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isMediaError, MediaError } from '../errors.js';
import { runProgram } from './exec.js';
import { type FfmpegContext, MAX_PIXELS, pixelLimitError, probeCommand } from './ffmpeg.js';

/** Side of the thumbnail the colours are counted on (area-averaged, so noise does not count). */
const THUMB = 32;

/** Basic properties of a picture, read without any model. */
export interface ImageFacts {
  /** Decoder name as ffprobe reports it (`png`, `mjpeg`, `webp`, `gif`, ...). */
  codec: string;
  width: number;
  height: number;
  /** The pixel format has an alpha channel (transparent areas are counted as white). */
  transparency: boolean;
  /** Named colours covering at least 5% of the picture, largest first, with their share (0..1). */
  colours: Array<{ name: string; share: number }>;
  /** Mean luminance, 0 (black) to 1 (white). */
  brightness: number;
  /** Share of pixels with visible colour (not black, white or grey). */
  colourfulness: number;
}

const QUIET = ['-nostdin', '-hide_banner', '-loglevel', 'error'];
const LOCAL_ONLY = ['-protocol_whitelist', 'file,pipe'];

/** ffmpeg refusing the picture: too many pixels is `TOO_LARGE`, anything else `CORRUPT_INPUT`. */
function refused(error: unknown, field: string, stderr = ''): never {
  const text = `${stderr} ${isMediaError(error) ? String(error.data?.stderr ?? '') : ''}`;
  const overPixels = pixelLimitError(text, field);
  if (overPixels) throw overPixels;
  if (error === undefined || isMediaError(error, 'ENGINE_FAILED'))
    throw new MediaError('CORRUPT_INPUT', `${field} could not be decoded as an image`, {
      data: { field },
      ...(error === undefined ? {} : { cause: error }),
    });
  throw error;
}

/** Reads codec, size and pixel format of the first video stream (the picture) with ffprobe. */
async function probePicture(
  path: string,
  context: FfmpegContext,
  field: string,
): Promise<{ codec: string; width: number; height: number; pixFmt: string }> {
  const args = [
    '-v',
    'warning',
    ...LOCAL_ONLY,
    '-max_pixels',
    String(MAX_PIXELS),
    '-select_streams',
    'v:0',
    '-show_entries',
    'stream=codec_name,width,height,pix_fmt',
    '-of',
    'json',
    path,
  ];
  const { stdout, stderr } = await runProgram(probeCommand(context.command), args, context).catch(
    (error: unknown) => refused(error, field),
  );
  let stream: Record<string, unknown> | undefined;
  try {
    const parsed = JSON.parse(stdout.toString('utf8')) as { streams?: Array<Record<string, unknown>> };
    stream = parsed.streams?.[0];
  } catch {
    stream = undefined;
  }
  const width = Number(stream?.width);
  const height = Number(stream?.height);
  if (!stream || !(width > 0) || !(height > 0)) refused(undefined, field, stderr);
  return {
    codec: typeof stream.codec_name === 'string' ? stream.codec_name : 'unknown',
    width,
    height,
    pixFmt: typeof stream.pix_fmt === 'string' ? stream.pix_fmt : '',
  };
}

/**
 * Renders the picture (first frame) twice in one ffmpeg run, laid over white so transparent
 * areas read as paper: a greyscale PNG for OCR, scaled so its long side is between 1000 and
 * 3000 px (tesseract reads small text badly), and a 32×32 RGB thumbnail for the colours.
 */
async function render(
  input: string,
  dir: string,
  size: { width: number; height: number },
  context: FfmpegContext,
  field: string,
): Promise<{ ocrPng: string; thumb: Buffer }> {
  const long = Math.max(size.width, size.height);
  const factor = long < 1000 ? Math.min(4, 1000 / long) : long > 3000 ? 3000 / long : 1;
  const even = (value: number) => Math.max(2, Math.round((value * factor) / 2) * 2);
  const graph = [
    `color=c=white:s=${size.width}x${size.height}[paper]`,
    '[paper][0:v]overlay=shortest=1:format=auto,format=rgb24,split[a][b]',
    `[a]scale=${even(size.width)}:${even(size.height)}:flags=bicubic,format=gray[ocr]`,
    `[b]scale=${THUMB}:${THUMB}:flags=area,format=rgb24[thumb]`,
  ].join(';');
  const ocrPng = join(dir, 'ocr.png');
  const thumbPath = join(dir, 'thumb.rgb');
  const args = [
    ...QUIET,
    ...LOCAL_ONLY,
    '-max_pixels',
    String(MAX_PIXELS),
    '-i',
    input,
    '-filter_complex',
    graph,
    '-map',
    '[ocr]',
    '-frames:v',
    '1',
    ocrPng,
    '-map',
    '[thumb]',
    '-frames:v',
    '1',
    '-f',
    'rawvideo',
    thumbPath,
  ];
  await runProgram(context.command, args, context).catch((error: unknown) => refused(error, field));
  const thumb = await readFile(thumbPath).catch(() => refused(undefined, field));
  if (thumb.length !== THUMB * THUMB * 3) refused(undefined, field);
  return { ocrPng, thumb };
}

/** The basic colour name of one RGB pixel (hue bands for saturated colours, else grey levels). */
export function colourName(red: number, green: number, blue: number): string {
  const max = Math.max(red, green, blue);
  const min = Math.min(red, green, blue);
  const lightness = (max + min) / 510;
  const chroma = (max - min) / 255;
  if (chroma < 0.15 || lightness < 0.08 || lightness > 0.95) {
    if (lightness < 0.2) return 'black';
    if (lightness > 0.85) return 'white';
    return 'grey';
  }
  let hue: number;
  if (max === red) hue = (((green - blue) / (max - min)) * 60 + 360) % 360;
  else if (max === green) hue = ((blue - red) / (max - min)) * 60 + 120;
  else hue = ((red - green) / (max - min)) * 60 + 240;
  if (hue < 15 || hue >= 345) return lightness > 0.7 ? 'pink' : lightness < 0.3 ? 'brown' : 'red';
  if (hue < 40) return lightness < 0.4 ? 'brown' : 'orange';
  if (hue < 70) return 'yellow';
  if (hue < 165) return 'green';
  if (hue < 200) return 'cyan';
  if (hue < 255) return 'blue';
  if (hue < 290) return 'purple';
  return 'pink';
}

/** Colour shares, brightness and colourfulness of an RGB24 thumbnail. */
export function colourFacts(rgb: Uint8Array): Pick<ImageFacts, 'colours' | 'brightness' | 'colourfulness'> {
  const counts = new Map<string, number>();
  const pixels = Math.floor(rgb.length / 3);
  let luminance = 0;
  let coloured = 0;
  for (let index = 0; index < pixels * 3; index += 3) {
    const red = rgb[index] ?? 0;
    const green = rgb[index + 1] ?? 0;
    const blue = rgb[index + 2] ?? 0;
    const name = colourName(red, green, blue);
    counts.set(name, (counts.get(name) ?? 0) + 1);
    luminance += (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255;
    if (name !== 'black' && name !== 'white' && name !== 'grey') coloured += 1;
  }
  const share = (count: number) => Math.round((count / Math.max(1, pixels)) * 100) / 100;
  const colours = [...counts]
    .filter(([, count]) => count / Math.max(1, pixels) >= 0.05)
    .sort((a, b) => b[1] - a[1])
    .map(([name, count]) => ({ name, share: share(count) }));
  return { colours, brightness: share(luminance), colourfulness: share(coloured) };
}

/**
 * Probes and renders a picture inside the caller's scratch directory: its facts, and the path
 * of the greyscale PNG for OCR.
 */
export async function readImageFacts(
  bytes: Uint8Array,
  dir: string,
  context: FfmpegContext,
  field: string,
): Promise<{ facts: ImageFacts; ocrPng: string }> {
  const input = join(dir, 'input');
  await writeFile(input, bytes, { mode: 0o600 });
  const probed = await probePicture(input, context, field);
  const { ocrPng, thumb } = await render(input, dir, probed, context, field);
  return {
    facts: {
      codec: probed.codec,
      width: probed.width,
      height: probed.height,
      // Pixel formats with an alpha channel; a palette (pal8) may hide one, which ffprobe does not say.
      transparency: /^(rgba|bgra|argb|abgr|ya|yuva|gbrap)/.test(probed.pixFmt),
      ...colourFacts(thumb),
    },
    ocrPng,
  };
}
