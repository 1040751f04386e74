import { inflateRawSync } from 'node:zlib';
import { MediaError } from '../errors.js';

/** Most bytes a DOCX may unpack to, all entries together (text, styles and images). */
export const MAX_UNPACKED_BYTES = 128 * 1024 * 1024;

/** Most entries a DOCX may have (Word writes a few dozen). */
const MAX_ENTRIES = 10_000;

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/**
 * Checks a ZIP (a DOCX) before an unzipper that trusts it sees it: JSZip, inside mammoth,
 * inflates each entry in full and only then compares the size with the header, so a 25 MiB
 * file of zeros deflated 1000:1 would take gigabytes. Here every entry is inflated with zlib's
 * output cap set to the size its header declares (never more than {@link MAX_UNPACKED_BYTES}
 * in all), at the offsets JSZip reads, every central header JSZip reads (it ignores the
 * end record's count); a lying header or an oversize archive is refused.
 */
export function checkZip(bytes: Uint8Array, field: string): void {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const corrupt = (why: string): never => {
    throw new MediaError('CORRUPT_INPUT', `${field} is a DOCX that could not be read: ${why}`, {
      data: { field },
    });
  };
  const tooLarge = (): never => {
    throw new MediaError('TOO_LARGE', `${field} unpacks to more than ${MAX_UNPACKED_BYTES} bytes`, {
      data: { field, maxBytes: MAX_UNPACKED_BYTES },
    });
  };
  // The end record sits in the last 22 bytes plus at most a 65535-byte comment.
  let end = -1;
  for (let at = buffer.length - 22; at >= Math.max(0, buffer.length - 22 - 65_535); at -= 1) {
    if (buffer.readUInt32LE(at) === EOCD) {
      end = at;
      break;
    }
  }
  if (end < 0) corrupt('no ZIP end record');
  // JSZip's reading: the directory starts where the end record says, shifted by any bytes
  // between its declared end and the end record (data prepended to the archive), and every
  // consecutive central header is an entry, whatever count the end record gives.
  // Any field at its maximum makes JSZip read a ZIP64 record instead: never a DOCX's size.
  const sixteen = [4, 6, 8, 10].some((at) => buffer.readUInt16LE(end + at) === 0xffff);
  if (sixteen || [12, 16].some((at) => buffer.readUInt32LE(end + at) === 0xffffffff))
    corrupt('ZIP64 archives are not read');
  const size = buffer.readUInt32LE(end + 12);
  const declaredStart = buffer.readUInt32LE(end + 16);
  const shift = end - (declaredStart + size);
  if (shift < 0) corrupt('the central directory runs past its end record');
  let at = declaredStart + shift;
  let total = 0;
  let entries = 0;
  while (at + 46 <= buffer.length && buffer.readUInt32LE(at) === CENTRAL) {
    entries += 1;
    if (entries > MAX_ENTRIES) corrupt(`more than ${MAX_ENTRIES} entries`);
    const method = buffer.readUInt16LE(at + 10);
    const compressed = buffer.readUInt32LE(at + 20);
    const declared = buffer.readUInt32LE(at + 24);
    const local = buffer.readUInt32LE(at + 42) + shift;
    at += 46 + buffer.readUInt16LE(at + 28) + buffer.readUInt16LE(at + 30) + buffer.readUInt16LE(at + 32);
    // ZIP64 sizes (0xFFFFFFFF) are over the cap anyway.
    total += declared;
    if (total > MAX_UNPACKED_BYTES) tooLarge();
    if (local + 30 > buffer.length || buffer.readUInt32LE(local) !== LOCAL) corrupt('bad local header');
    const start = local + 30 + buffer.readUInt16LE(local + 26) + buffer.readUInt16LE(local + 28);
    if (start + compressed > buffer.length) corrupt('entry runs past the end');
    const data = buffer.subarray(start, start + compressed);
    if (method === 0) {
      if (compressed !== declared) corrupt('stored entry size mismatch');
    } else if (method === 8) {
      const inflated = inflatedSize(data, declared);
      if (inflated === undefined) corrupt('an entry inflates past its declared size or is not deflate data');
      if (inflated !== declared) corrupt('an entry inflates to another size than declared');
    } else corrupt(`compression method ${method} is not supported`);
  }
  if (entries === 0) corrupt('bad central directory');
}

/** The inflated size of raw deflate `data`, or undefined when it passes `declared` or is not deflate. */
function inflatedSize(data: Buffer, declared: number): number | undefined {
  try {
    return inflateRawSync(data, { maxOutputLength: Math.max(1, declared) }).length;
  } catch {
    return undefined;
  }
}
