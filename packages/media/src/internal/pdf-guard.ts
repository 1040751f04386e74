import { MediaError } from '../errors.js';
import {
  BudgetExceeded,
  type ChainOutcome,
  DecodeBudget,
  decodeChainStreaming,
  decodeChainSync,
  type FilterName,
  type Stage,
} from './pdf-filters.js';
import {
  definitionsOf,
  mentionsEncrypt,
  objectIndex,
  type PdfValue,
  type StreamDictionary,
  streamDictionary,
  valuesOf,
} from './pdf-syntax.js';

/** Most bytes the filters of a PDF's streams may decode to, every stage of every chain together. */
export const MAX_PDF_INFLATED_BYTES = 128 * 1024 * 1024;

/** A `stream` keyword after a dictionary's `>>` (blanks and comments between), as pdf.js reads one. */
// A comment runs to its line end: each character belongs to one alternative only, so the
// search stays linear (a comment that may end anywhere backtracks exponentially on `>>%%%…`).
const STREAM = />>(?:[\0\t\n\f\r ]|%[^\r\n]*[\r\n])*stream(?![^\0\t\n\f\r ()<>[\]{}/%])/g;

const FILTERS: Record<string, FilterName> = {
  FlateDecode: 'flate',
  Fl: 'flate',
  LZWDecode: 'lzw',
  LZW: 'lzw',
  ASCII85Decode: 'a85',
  A85: 'a85',
  ASCIIHexDecode: 'ahx',
  AHx: 'ahx',
  RunLengthDecode: 'rl',
  RL: 'rl',
};

/** What to do with one stream: nothing (no filter), decode these chains, or hand it over undecoded. */
type Plan = { kind: 'none' } | { kind: 'decode'; chains: Stage[][] } | { kind: 'neutralize' };

class Refusal extends Error {}

/**
 * Checks a PDF before pdf.js reads it and returns the copy to give pdf.js. pdf.js decodes each
 * stream's filter chain in full, with no cap: a 2 KB page stream filtered
 * `[/FlateDecode /FlateDecode]` made 2.2 GB. Here every stream's chain is decoded stage by
 * stage (Flate, LZW, RunLength, ASCIIHex, ASCII85), streamed, every stage's output counted
 * against {@link MAX_PDF_INFLATED_BYTES} for the whole document, and stopped there
 * (`TOO_LARGE`). A stream that does not decode cleanly to its end, that only image codecs
 * (DCT, JPX, CCITT, JBIG2) or Brotli read, or that is an image, has its filter renamed in the
 * copy, so pdf.js reads its bytes as they are and cannot inflate them: text extraction never
 * needed them. Encrypted PDFs are refused (their streams cannot be checked before decryption),
 * as are a stream whose dictionary cannot be read and a stream nested in a decoded stream.
 */
export async function checkPdf(bytes: Uint8Array, field: string): Promise<Uint8Array> {
  // A copy of its own (never a pooled Buffer): pdf.js takes ownership of what it is given.
  const copy = new Uint8Array(bytes);
  const file = Buffer.from(copy.buffer, copy.byteOffset, copy.byteLength);
  const text = file.toString('latin1');
  if (mentionsEncrypt(text))
    throw new MediaError('UNSUPPORTED_TYPE', `${field} is an encrypted PDF; encrypted PDFs are not read`, {
      data: { field, detected: 'application/pdf' },
    });
  const budget = new DecodeBudget(MAX_PDF_INFLATED_BYTES, 2 * file.length + 16 * 1024 * 1024);
  let index: Map<string, number[]> | undefined;
  const refs = () => {
    index ??= objectIndex(text);
    return index;
  };
  let floor = 0;
  // The first `endstream` at or after a position; reused while positions grow (linear overall).
  let nextEnd = -1;
  const endstreamAfter = (start: number) => {
    if (nextEnd !== file.length && nextEnd < start) {
      const found = text.indexOf('endstream', start);
      nextEnd = found < 0 ? file.length : found;
    }
    return nextEnd;
  };
  try {
    for (const match of text.matchAll(STREAM)) {
      const keyword = (match.index ?? 0) + match[0].length - 6;
      const found = streamDictionary(text, keyword, floor);
      floor = keyword;
      if (!found) throw new Refusal('a stream whose dictionary could not be read');
      const plan = planFor(found.dict, text, refs);
      if (plan.kind === 'none') continue;
      if (plan.kind === 'decode') {
        const start = dataStart(text, keyword + 6);
        const range = { start, firstEnd: endstreamAfter(start) };
        if (await decodesCleanly(file, range, plan.chains, budget)) continue;
      }
      neutralize(file, found);
    }
  } catch (error) {
    if (error instanceof BudgetExceeded) throw tooLarge(field, error);
    if (error instanceof Refusal)
      throw new MediaError('CORRUPT_INPUT', `${field} is a PDF that could not be checked: ${error.message}`, {
        data: { field, detected: 'application/pdf' },
      });
    throw error;
  }
  return copy;
}

function tooLarge(field: string, error: BudgetExceeded): MediaError {
  const why =
    error.which === 'output'
      ? `whose streams decode past ${MAX_PDF_INFLATED_BYTES} bytes`
      : 'whose streams do not end (their data was read past twice the file)';
  return new MediaError('TOO_LARGE', `${field} is a PDF ${why}`, {
    data: { field, maxBytes: MAX_PDF_INFLATED_BYTES },
  });
}

/** Decodes each chain (fast in memory when small, streamed otherwise); false when one is unclean. */
async function decodesCleanly(
  file: Buffer,
  { start, firstEnd }: { start: number; firstEnd: number },
  chains: Stage[][],
  budget: DecodeBudget,
): Promise<boolean> {
  for (const chain of chains) {
    const scan = nestedStreamScanner();
    let outcome: ChainOutcome | 'slow' = decodeChainSync(file, start, firstEnd, chain, budget, scan);
    if (outcome === 'slow') outcome = await decodeChainStreaming(file, start, firstEnd, chain, budget, scan);
    if (outcome === 'unclean') return false;
  }
  return true;
}

/** Where pdf.js starts a stream's data: after the end of the line of the `stream` keyword. */
function dataStart(text: string, from: number): number {
  let at = from;
  while (at < text.length && text[at] !== '\n' && text[at] !== '\r') at += 1;
  if (text[at] === '\r' && text[at + 1] === '\n') return at + 2;
  return Math.min(text.length, at + 1);
}

/**
 * Fails on `>> stream` in decoded output: pdf.js reads objects out of any stream used as an
 * object stream, streams included, and such a nested stream's filters were never checked.
 * Searched in the bytes (native `indexOf`), with the last 256 bytes of each chunk carried over.
 */
function nestedStreamScanner(): (chunk: Buffer) => void {
  let tail = Buffer.alloc(0);
  return (chunk) => {
    const data = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
    for (let at = data.indexOf('stream'); at >= 0; at = data.indexOf('stream', at + 1)) {
      const next = data[at + 6];
      const delimited = next === undefined || !isRegularByte(next);
      if (delimited && followsDictionary(data, at))
        throw new Refusal('a stream nested inside a decoded stream');
    }
    tail = Buffer.from(data.subarray(Math.max(0, data.length - 256)));
  };
}

const isRegularByte = (code: number) => !/[\0\t\n\f\r ()<>[\]{}/%]/.test(String.fromCharCode(code));

/**
 * True when only blanks separate `at` from a `>>` before it, or when a line break is crossed
 * and the line before holds a `%` (a comment may sit between them: counted as a dictionary).
 */
function followsDictionary(data: Buffer, at: number): boolean {
  let index = at - 1;
  let crossedLine = false;
  while (index >= 0) {
    const code = data[index] as number;
    if (code === 0x0a || code === 0x0d) crossedLine = true;
    else if (code !== 0x20 && code !== 0x09 && code !== 0x0c && code !== 0x00) break;
    index -= 1;
  }
  if (index >= 1 && data[index] === 0x3e && data[index - 1] === 0x3e) return true;
  if (!crossedLine) return false;
  const lineStart = Math.max(data.lastIndexOf(0x0a, index), data.lastIndexOf(0x0d, index));
  return data.subarray(lineStart + 1, index + 1).includes(0x25);
}

/** The filter chains pdf.js might apply to a stream of this dictionary. */
function planFor(dict: PdfValue, text: string, refs: () => Map<string, number[]>): Plan {
  const values = [...valuesOf(dict, 'F'), ...valuesOf(dict, 'Filter')];
  if (values.length === 0) return { kind: 'none' };
  // Text extraction never decodes images: their filters are not worth checking.
  if (valuesOf(dict, 'Subtype').some((value) => value.kind === 'name' && value.name === 'Image'))
    return { kind: 'neutralize' };
  // A reference with no top-level definition (one inside an object stream, say) stays a
  // reference: the guard cannot see what pdf.js will, so the stream is handed over undecoded.
  const resolve = (value: PdfValue): PdfValue[] => {
    if (value.kind !== 'ref') return [value];
    const found = definitionsOf(text, refs(), value.num, value.gen);
    return found.length > 0 ? found : [value];
  };
  const chains: Stage[][] = [];
  for (const value of values.flatMap(resolve)) {
    if (value.kind === 'ref') return { kind: 'neutralize' };
    const items = value.kind === 'array' ? value.items : value.kind === 'name' ? [value] : [];
    const names = items.map((item) => resolve(item));
    if (names.some((found) => found.length !== 1 || found[0]?.kind !== 'name')) return { kind: 'neutralize' };
    const chain: Stage[] = [];
    for (const [name] of names) {
      const filter =
        name?.kind === 'name' && Object.hasOwn(FILTERS, name.name) ? FILTERS[name.name] : undefined;
      if (!filter) return { kind: 'neutralize' };
      chain.push({ filter });
    }
    if (chain.length > 0) chains.push(chain);
  }
  if (chains.length === 0) return { kind: 'none' };
  return withParameters(dict, chains);
}

/**
 * Applies `/DecodeParms`: LZW's `EarlyChange` (0 or 1, written out), and no predictor between
 * two stages (pdf.js would feed the next stage predicted bytes, not what was counted). Anything
 * else the guard cannot follow is handed over undecoded.
 */
function withParameters(dict: PdfValue, chains: Stage[][]): Plan {
  const parms = [...valuesOf(dict, 'DP'), ...valuesOf(dict, 'DecodeParms')];
  if (parms.length === 0) return { kind: 'decode', chains };
  for (const chain of chains) {
    if (chain.length === 1 && chain[0]?.filter !== 'lzw') continue;
    for (const value of parms) {
      const perStage = value.kind === 'array' ? value.items : chain.map(() => value);
      for (const [at, stage] of chain.entries()) {
        const parm = perStage[at];
        if (parm === undefined || parm.kind === 'other') continue;
        if (parm.kind !== 'dict') return { kind: 'neutralize' };
        const predictor = number(valuesOf(parm, 'Predictor'));
        if (predictor === undefined || (predictor > 1 && at < chain.length - 1))
          return { kind: 'neutralize' };
        if (stage.filter !== 'lzw') continue;
        const earlyChange = number(valuesOf(parm, 'EarlyChange'), 1);
        if (earlyChange !== 0 && earlyChange !== 1) return { kind: 'neutralize' };
        stage.earlyChange = earlyChange;
      }
    }
  }
  return { kind: 'decode', chains };
}

/** The one direct number among `values` (`fallback` when absent); undefined when not a plain number. */
function number(values: PdfValue[], fallback = 1): number | undefined {
  if (values.length === 0) return fallback;
  const [value] = values;
  return values.length === 1 && value?.kind === 'number' ? value.value : undefined;
}

/** Renames the stream's `/F` and `/Filter` keys in the copy: pdf.js then reads its bytes undecoded. */
function neutralize(file: Buffer, found: StreamDictionary): void {
  if (found.dict.kind !== 'dict') return;
  for (const entry of found.dict.entries) {
    if (entry.key !== 'F' && entry.key !== 'Filter') continue;
    const start = found.offset + entry.keyStart;
    file.write(`/${'X'.repeat(entry.keyEnd - entry.keyStart - 1)}`, start, 'latin1');
  }
}
