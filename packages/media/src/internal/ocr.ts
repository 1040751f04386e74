import { isMediaError, MediaError } from '../errors.js';
import { runProgram } from './exec.js';

/** How tesseract runs. */
export interface OcrOptions {
  command: string;
  /** Tesseract language(s), `eng` or `eng+deu`. */
  language: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}

/** What tesseract read from a picture. */
export interface OcrResult {
  /** The confident words, in reading order: lines joined by newlines, blocks by a blank line. */
  text: string;
  words: number;
  /** Mean confidence (0..100) of the words kept. */
  confidence: number;
  /** Share of the picture covered by the boxes of lines holding kept words (0..1). */
  coverage: number;
}

/**
 * Words tesseract is less sure of than this are dropped: on photographs it "reads" texture as
 * strings of punctuation and short letter runs, always with low confidence.
 */
const MIN_CONFIDENCE = 60;

/** The Debian package with tesseract's data for `language` (`chi_sim` → `tesseract-ocr-chi-sim`). */
export function languagePackage(language: string): string {
  return `tesseract-ocr-${language.toLowerCase().replaceAll('_', '-')}`;
}

/** Turns tesseract's "Failed loading language 'xyz'" into the package to install. */
function missingLanguage(error: unknown, language: string): never {
  const stderr = isMediaError(error) ? String(error.data?.stderr ?? '') : '';
  const failed = /Failed loading language '([A-Za-z_]+)'/.exec(stderr)?.[1];
  if (failed)
    throw new MediaError(
      'ENGINE_MISSING',
      `tesseract has no ${failed} language data; install it with: apt-get install -y ${languagePackage(failed)}`,
      { data: { command: 'tesseract', package: languagePackage(failed), language } },
    );
  throw error;
}

/** One row of tesseract's TSV output. */
interface Row {
  level: number;
  line: string;
  block: string;
  area: number;
  confidence: number;
  text: string;
}

function parseTsv(tsv: string): Row[] {
  const rows: Row[] = [];
  for (const line of tsv.split('\n').slice(1)) {
    const cells = line.split('\t');
    if (cells.length < 12) continue;
    const [level, page, block, paragraph, lineNumber, , , , width, height, confidence] = cells;
    rows.push({
      level: Number(level),
      block: `${page}.${block}`,
      line: `${page}.${block}.${paragraph}.${lineNumber}`,
      area: Number(width) * Number(height),
      confidence: Number(confidence),
      text: cells.slice(11).join('\t').trim(),
    });
  }
  return rows;
}

/**
 * Reads the text of a picture with tesseract (one thread: the host's cores are shared), keeping
 * confident words only. A missing program or language is `ENGINE_MISSING` naming the package.
 */
export async function readText(path: string, options: OcrOptions): Promise<OcrResult> {
  const env = { ...(options.env ?? process.env), OMP_THREAD_LIMIT: '1' };
  const { stdout } = await runProgram(
    options.command,
    [path, 'stdout', '-l', options.language, '--psm', '3', 'tsv'],
    { timeoutMs: options.timeoutMs, signal: options.signal, env, maxStdoutBytes: 16 * 1024 * 1024 },
  ).catch((error: unknown) => missingLanguage(error, options.language));
  const rows = parseTsv(stdout.toString('utf8'));
  const pageArea = rows.find((row) => row.level === 1)?.area ?? 0;
  const kept = rows.filter(
    (row) => row.level === 5 && row.confidence >= MIN_CONFIDENCE && /[\p{L}\p{N}]/u.test(row.text),
  );
  const lines = new Map<string, string[]>();
  for (const word of kept) lines.set(word.line, [...(lines.get(word.line) ?? []), word.text]);
  let text = '';
  let previousBlock: string | undefined;
  for (const [key, words] of lines) {
    const block = key.split('.').slice(0, 2).join('.');
    if (previousBlock !== undefined) text += block === previousBlock ? '\n' : '\n\n';
    text += words.join(' ');
    previousBlock = block;
  }
  const lineArea = rows
    .filter((row) => row.level === 4 && lines.has(row.line))
    .reduce((sum, row) => sum + row.area, 0);
  const confidence = kept.reduce((sum, word) => sum + word.confidence, 0) / Math.max(1, kept.length);
  return {
    text,
    words: kept.length,
    confidence: Math.round(confidence),
    coverage: pageArea > 0 ? Math.round((lineArea / pageArea) * 100) / 100 : 0,
  };
}
