/**
 * Just enough of the PDF syntax to read a stream's dictionary the way pdf.js's lexer does:
 * names with `#xx` escapes, literal strings with nested parentheses and backslash escapes,
 * hex strings, arrays, dictionaries, numbers, indirect references (`N G R`) and comments.
 * It reads a latin1 string of the file; positions are byte offsets.
 */

/** A PDF value as far as the guard needs it. */
export type PdfValue =
  | { kind: 'name'; name: string }
  | { kind: 'number'; value: number }
  | { kind: 'ref'; num: number; gen: number }
  | { kind: 'array'; items: PdfValue[] }
  | { kind: 'dict'; entries: DictEntry[] }
  | { kind: 'other' };

/** One `key value` pair of a dictionary, with where its key is written (to rename it). */
export interface DictEntry {
  key: string;
  keyStart: number;
  keyEnd: number;
  value: PdfValue;
}

const WHITE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);
const DELIMITERS = new Set([0x28, 0x29, 0x3c, 0x3e, 0x5b, 0x5d, 0x7b, 0x7d, 0x2f, 0x25]);
const MAX_DEPTH = 64;

const isRegular = (code: number) => !WHITE.has(code) && !DELIMITERS.has(code) && !Number.isNaN(code);

interface Token {
  type: 'name' | 'number' | 'keyword' | 'string' | 'open' | 'close' | 'eof';
  text: string;
  start: number;
  end: number;
}

/** Where the next token starts: whitespace and comments skipped. */
export function skipBlank(text: string, from: number): number {
  let at = from;
  while (at < text.length) {
    const code = text.charCodeAt(at);
    if (WHITE.has(code)) at += 1;
    else if (code === 0x25) {
      while (at < text.length && text[at] !== '\n' && text[at] !== '\r') at += 1;
    } else break;
  }
  return at;
}

function readToken(text: string, from: number): Token {
  const start = skipBlank(text, from);
  if (start >= text.length) return { type: 'eof', text: '', start, end: start };
  const char = text[start] as string;
  if (char === '(') return { type: 'string', text: '', start, end: literalStringEnd(text, start) };
  if (char === '<') {
    if (text[start + 1] === '<') return { type: 'open', text: '<<', start, end: start + 2 };
    const close = text.indexOf('>', start);
    return { type: 'string', text: '', start, end: close < 0 ? text.length : close + 1 };
  }
  if (char === '>') {
    const double = text[start + 1] === '>';
    return { type: 'close', text: double ? '>>' : '>', start, end: start + (double ? 2 : 1) };
  }
  if (char === '[' || char === '{') return { type: 'open', text: char, start, end: start + 1 };
  if (char === ']' || char === '}' || char === ')')
    return { type: 'close', text: char, start, end: start + 1 };
  let end = start + 1;
  while (end < text.length && isRegular(text.charCodeAt(end))) end += 1;
  const raw = text.slice(start, end);
  if (char === '/') return { type: 'name', text: decodeName(raw.slice(1)), start, end };
  if (/^[+-]?(?:\d+\.?\d*|\.\d+)$/.test(raw)) return { type: 'number', text: raw, start, end };
  return { type: 'keyword', text: raw, start, end };
}

/** The end of a literal string opened at `start`: balanced parentheses, `\` escapes the next byte. */
function literalStringEnd(text: string, start: number): number {
  let depth = 0;
  for (let at = start; at < text.length; at += 1) {
    const char = text[at];
    if (char === '\\') at += 1;
    else if (char === '(') depth += 1;
    else if (char === ')') {
      depth -= 1;
      if (depth === 0) return at + 1;
    }
  }
  return text.length;
}

/** `#xx` escapes as pdf.js reads them (a `#` not followed by two hex digits stays). */
function decodeName(raw: string): string {
  if (!raw.includes('#')) return raw;
  return raw.replace(/#([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** One object read from `from`, and where reading stopped; undefined when the syntax breaks. */
export function parseObject(
  text: string,
  from: number,
  depth = 0,
): { value: PdfValue; end: number } | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const token = readToken(text, from);
  switch (token.type) {
    case 'eof':
    case 'close':
      return undefined;
    case 'name':
      return { value: { kind: 'name', name: token.text }, end: token.end };
    case 'string':
      return { value: { kind: 'other' }, end: token.end };
    case 'keyword':
      return { value: { kind: 'other' }, end: token.end };
    case 'number':
      return numberOrRef(text, token);
    case 'open':
      if (token.text === '<<') return parseDict(text, token.end, depth);
      if (token.text === '[') return parseArray(text, token.end, depth);
      return { value: { kind: 'other' }, end: token.end };
  }
}

function numberOrRef(text: string, token: Token): { value: PdfValue; end: number } {
  const value = Number(token.text);
  if (Number.isInteger(value) && value >= 0) {
    const gen = readToken(text, token.end);
    if (gen.type === 'number' && /^\d+$/.test(gen.text)) {
      const r = readToken(text, gen.end);
      if (r.type === 'keyword' && r.text === 'R')
        return { value: { kind: 'ref', num: value, gen: Number(gen.text) }, end: r.end };
    }
  }
  return { value: { kind: 'number', value }, end: token.end };
}

function parseArray(text: string, from: number, depth: number): { value: PdfValue; end: number } | undefined {
  const items: PdfValue[] = [];
  let at = from;
  for (;;) {
    const next = readToken(text, at);
    if (next.type === 'eof') return undefined;
    if (next.type === 'close' && next.text === ']') return { value: { kind: 'array', items }, end: next.end };
    const item = parseObject(text, at, depth + 1);
    if (!item) return undefined;
    items.push(item.value);
    at = item.end;
  }
}

function parseDict(text: string, from: number, depth: number): { value: PdfValue; end: number } | undefined {
  const entries: DictEntry[] = [];
  let at = from;
  for (;;) {
    const key = readToken(text, at);
    if (key.type === 'eof') return undefined;
    if (key.type === 'close' && key.text === '>>') return { value: { kind: 'dict', entries }, end: key.end };
    if (key.type !== 'name') {
      // pdf.js skips a key that is not a name and reads on; so does the guard.
      const skipped = parseObject(text, at, depth + 1);
      at = skipped ? skipped.end : key.end;
      continue;
    }
    const value = parseObject(text, key.end, depth + 1);
    if (!value) return undefined;
    entries.push({ key: key.text, keyStart: key.start, keyEnd: key.end, value: value.value });
    at = value.end;
  }
}

/** The values of `key` in a dictionary (a key written twice gives both). */
export const valuesOf = (dict: PdfValue, key: string): PdfValue[] =>
  dict.kind === 'dict' ? dict.entries.filter((entry) => entry.key === key).map((entry) => entry.value) : [];

const OBJ = /(?<![^\0\t\n\f\r ()<>[\]{}/%])obj(?![^\0\t\n\f\r ()<>[\]{}/%])/g;

/** A stream's dictionary, and where in the file its text starts (key positions are relative to it). */
export interface StreamDictionary {
  dict: PdfValue;
  offset: number;
}

/**
 * The dictionary of the stream whose `stream` keyword is at `keyword`: read from one of the 8
 * nearest `obj` keywords between `floor` (the previous stream keyword) and it, at most 64 KiB
 * back, whose object is a dictionary followed by nothing but blanks up to the keyword. Undefined
 * when none is: a `stream` keyword pdf.js might read whose dictionary the guard cannot.
 */
export function streamDictionary(text: string, keyword: number, floor: number): StreamDictionary | undefined {
  const offset = Math.max(0, floor, keyword - 65_536);
  const window = text.slice(offset, keyword);
  const headers = [...window.matchAll(OBJ)].map((match) => match.index ?? 0);
  for (const header of headers.reverse().slice(0, 8)) {
    const object = parseObject(window, header + 3);
    if (object?.value.kind === 'dict' && skipBlank(window, object.end) === window.length)
      return { dict: object.value, offset };
  }
  return undefined;
}

/** Where each `N G obj` is defined, by `"N G"`, found in one pass over the file. */
export function objectIndex(text: string): Map<string, number[]> {
  const index = new Map<string, number[]>();
  const header = /(?<![0-9])(\d+)[\0\t\n\f\r ]+(\d+)[\0\t\n\f\r ]+obj(?![^\0\t\n\f\r ()<>[\]{}/%])/g;
  for (const match of text.matchAll(header)) {
    const key = `${Number(match[1])} ${Number(match[2])}`;
    const at = (match.index ?? 0) + match[0].length;
    index.set(key, [...(index.get(key) ?? []), at].slice(0, 16));
  }
  return index;
}

/** Every top-level definition of an object (an object redefined by an update gives several). */
export function definitionsOf(
  text: string,
  index: Map<string, number[]>,
  num: number,
  gen: number,
): PdfValue[] {
  return (index.get(`${num} ${gen}`) ?? []).map(
    (at) => parseObject(text.slice(at, at + 4096), 0)?.value ?? { kind: 'other' },
  );
}

/** True when any name in the file (escapes decoded) is `/Encrypt`: the file is encrypted. */
export function mentionsEncrypt(text: string): boolean {
  if (/\/Encrypt(?![^\0\t\n\f\r ()<>[\]{}/%])/.test(text)) return true;
  for (const match of text.matchAll(/\/[^\0\t\n\f\r ()<>[\]{}/%]*#[^\0\t\n\f\r ()<>[\]{}/%]*/g))
    if (decodeName(match[0].slice(1)) === 'Encrypt') return true;
  return false;
}
