import { type CallScope, ffmpegOf, type MediaContext } from './internal/context.js';
import { commandExists } from './internal/engines.js';
import { runProgram } from './internal/exec.js';
import { withScratch } from './internal/ffmpeg.js';
import { type ImageFacts, readImageFacts } from './internal/image-facts.js';
import { languagePackage, type OcrResult, readText } from './internal/ocr.js';
import type { EngineEntry } from './providers.js';
import type { VisionAnswer } from './vision.js';

/** The engine name the keyless vision answers and `media.providers` carry. */
export const KEYLESS_VISION_ENGINE = 'tesseract';

/** The Debian packages the keyless vision engine needs, for "install" hints. */
export const KEYLESS_VISION_PACKAGES = 'tesseract-ocr tesseract-ocr-eng ffmpeg';

/** What the keyless engine is, said first in every answer so no one mistakes it for a model. */
const PREAMBLE =
  'Keyless local analysis (tesseract OCR and ffmpeg image facts; no vision model answered). ' +
  'It reads printed text and reports basic properties; it does not recognise objects, people, scenes or handwriting.';

/** True when tesseract and ffmpeg can be run (the language data is checked when it runs). */
export async function keylessVisionReady(context: MediaContext): Promise<boolean> {
  const section = context.section();
  return (
    (await commandExists(section.vision.tesseractCommand, context.env)) &&
    (await commandExists(section.ffmpegCommand, context.env))
  );
}

/** The facts and text of one picture. */
interface PictureReading {
  facts: ImageFacts;
  ocr: OcrResult;
}

async function readPicture(
  context: MediaContext,
  bytes: Uint8Array,
  field: string,
  signal?: AbortSignal,
): Promise<PictureReading> {
  const section = context.section();
  return withScratch(async (dir) => {
    const { facts, ocrPng } = await readImageFacts(bytes, dir, ffmpegOf(context, signal), field);
    const ocr = await readText(ocrPng, {
      command: section.vision.tesseractCommand,
      language: section.vision.ocrLanguage,
      timeoutMs: section.timeoutMs,
      signal,
      env: context.env,
    });
    return { facts, ocr };
  });
}

const percent = (share: number) => `${Math.round(share * 100)}%`;

/** One sentence of the picture's properties: size, transparency, brightness, colours. */
function describeFacts(facts: ImageFacts): string {
  const tone = facts.brightness >= 0.7 ? 'light' : facts.brightness <= 0.3 ? 'dark' : 'mid-toned';
  const colours = facts.colours.map((colour) => `${colour.name} ${percent(colour.share)}`).join(', ');
  const colourfulness =
    facts.colourfulness < 0.05
      ? 'black, white and grey only'
      : `${percent(facts.colourfulness)} of it in colour`;
  return (
    `${facts.width}×${facts.height} px ${facts.codec}, ${facts.transparency ? 'with' : 'no'} transparency; ` +
    `${tone} (brightness ${facts.brightness.toFixed(2)}), ${colourfulness}; main colours: ${colours || 'mixed'}.`
  );
}

/** Whether the picture is mostly text, some text or none, from the OCR's line boxes. */
function describeText(ocr: OcrResult): string {
  if (ocr.words === 0) return 'No readable text found.';
  const kind = ocr.words >= 3 && ocr.coverage >= 0.15 ? 'Mostly text' : 'Some text';
  return `${kind}: ${ocr.words} word${ocr.words === 1 ? '' : 's'}, lines cover ${percent(ocr.coverage)} of the picture, OCR confidence ${ocr.confidence}%.`;
}

function promptNote(prompt: string | undefined, defaultPrompt: string): string[] {
  return prompt !== undefined && prompt !== defaultPrompt
    ? ['The prompt was not interpreted: this engine cannot answer questions about a picture.']
    : [];
}

/**
 * Describes an image without a model: its format, size, colours and brightness (ffmpeg) and
 * the text in it (tesseract), after a preamble that says what the engine can and cannot do.
 */
export async function analyzeImageLocally(
  context: MediaContext,
  input: CallScope & { bytes: Uint8Array; mimeType: string; prompt?: string | undefined; field: string },
): Promise<VisionAnswer> {
  const { facts, ocr } = await readPicture(context, input.bytes, input.field, input.signal);
  const lines = [
    PREAMBLE,
    ...promptNote(input.prompt, 'Describe this image in detail'),
    `Image: ${input.mimeType}, ${describeFacts(facts)}`,
    describeText(ocr),
  ];
  if (ocr.text) lines.push(`Text read:\n${ocr.text}`);
  return { description: lines.join('\n'), engine: KEYLESS_VISION_ENGINE };
}

/**
 * Describes video frames without a model: each frame's facts and text, then the distinct
 * lines of text read across the frames in order of first appearance.
 */
export async function describeFramesLocally(
  context: MediaContext,
  input: CallScope & { frames: Uint8Array[]; durationMs?: number | undefined; prompt?: string | undefined },
): Promise<VisionAnswer> {
  const lines = [PREAMBLE, ...promptNote(input.prompt, 'Describe this video concisely.')];
  const length = input.durationMs === undefined ? '' : `, ${(input.durationMs / 1000).toFixed(1)} s long`;
  lines.push(`Video: ${input.frames.length} frame${input.frames.length === 1 ? '' : 's'} read${length}.`);
  const seen = new Set<string>();
  const text: string[] = [];
  for (const [index, frame] of input.frames.entries()) {
    const { facts, ocr } = await readPicture(context, frame, `frame ${index + 1}`, input.signal);
    lines.push(`Frame ${index + 1}: ${describeFacts(facts)} ${describeText(ocr)}`);
    for (const line of ocr.text.split('\n')) {
      const trimmed = line.trim();
      if (trimmed && !seen.has(trimmed)) {
        seen.add(trimmed);
        text.push(trimmed);
      }
    }
  }
  if (text.length > 0) lines.push(`Text read across the frames:\n${text.join('\n')}`);
  return { description: lines.join('\n'), engine: KEYLESS_VISION_ENGINE };
}

/** Language codes of `language` (`eng+deu`) tesseract lacks, by `tesseract --list-langs`. */
async function missingLanguages(context: MediaContext, language: string): Promise<string[]> {
  const { stdout } = await runProgram(context.section().vision.tesseractCommand, ['--list-langs'], {
    timeoutMs: 10_000,
    env: context.env,
  });
  const installed = new Set(
    stdout
      .toString('utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim()),
  );
  return language.split('+').filter((code) => !installed.has(code));
}

/**
 * The keyless vision engine as `media.providers` lists it: available when tesseract, its
 * language data and ffmpeg are installed; `detail` says what it does or what to install.
 */
export async function keylessVisionEntry(context: MediaContext, forVideo = false): Promise<EngineEntry> {
  const section = context.section();
  const entry = (available: boolean, detail: string): EngineEntry => ({
    engine: forVideo ? `${KEYLESS_VISION_ENGINE}-frames` : KEYLESS_VISION_ENGINE,
    keyless: true,
    available,
    detail,
  });
  if (forVideo && !section.vision.keylessVideo)
    return entry(false, 'set media.vision.keylessVideo: true (text and image facts from frames, no model)');
  if (!(await commandExists(section.ffmpegCommand, context.env)))
    return entry(false, 'not installed: apt-get install -y ffmpeg');
  if (!(await commandExists(section.vision.tesseractCommand, context.env)))
    return entry(false, 'not installed: apt-get install -y tesseract-ocr tesseract-ocr-eng');
  const missing = await missingLanguages(context, section.vision.ocrLanguage).catch(() => [
    section.vision.ocrLanguage,
  ]);
  if (missing.length > 0)
    return entry(false, `not installed: apt-get install -y ${missing.map(languagePackage).join(' ')}`);
  return entry(
    true,
    `reads text (OCR, ${section.vision.ocrLanguage}) and image facts; does not recognise objects`,
  );
}
