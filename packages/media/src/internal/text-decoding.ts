import { createRequire } from 'node:module';

// chardet is loaded by the first text that is neither declared nor valid UTF-8, so a daemon that
// decodes none does not hold it (issue #14); a synchronous require keeps decodeText synchronous.
const load = createRequire(import.meta.url);
let detector: typeof import('chardet') | undefined;

/**
 * Decodes text of any encoding: a byte-order mark or a declared charset wins, then valid
 * UTF-8, then what `chardet` guesses from byte statistics, with windows-1252 as the last resort
 * (it maps every byte, so nothing is lost to replacement characters).
 */
export function decodeText(bytes: Uint8Array, declaredCharset?: string): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return tryDecode(bytes, 'utf-8') ?? '';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return tryDecode(bytes, 'utf-16le') ?? '';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return tryDecode(bytes, 'utf-16be') ?? '';
  if (declaredCharset) {
    const declared = tryDecode(bytes, declaredCharset);
    if (declared !== undefined) return declared;
  }
  const utf8 = tryDecode(bytes, 'utf-8', true);
  if (utf8 !== undefined) return utf8;
  detector ??= load('chardet') as typeof import('chardet');
  const guessed = detector.detect(bytes);
  return (guessed && tryDecode(bytes, guessed)) ?? tryDecode(bytes, 'windows-1252') ?? '';
}

function tryDecode(bytes: Uint8Array, encoding: string, fatal = false): string | undefined {
  try {
    return new TextDecoder(encoding.toLowerCase(), { fatal }).decode(bytes);
  } catch {
    return undefined;
  }
}
