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
 * in all), at the offsets JSZip reads; a lying header or an oversize archive is refused.
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
  const entries = buffer.readUInt16LE(end + 10);
  if (entries > MAX_ENTRIES) corrupt(`more than ${MAX_ENTRIES} entries`);
  let at = buffer.readUInt32LE(end + 16);
  let total = 0;
  for (let index = 0; index < entries; index += 1) {
    if (at + 46 > buffer.length || buffer.readUInt32LE(at) !== CENTRAL) corrupt('bad central directory');
    const method = buffer.readUInt16LE(at + 10);
    const compressed = buffer.readUInt32LE(at + 20);
    const declared = buffer.readUInt32LE(at + 24);
    const local = buffer.readUInt32LE(at + 42);
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
      const size = inflatedSize(data, declared);
      if (size === undefined) corrupt('an entry inflates past its declared size or is not deflate data');
      if (size !== declared) corrupt('an entry inflates to another size than declared');
    } else corrupt(`compression method ${method} is not supported`);
  }
}

/** The inflated size of raw deflate `data`, or undefined when it passes `declared` or is not deflate. */
function inflatedSize(data: Buffer, declared: number): number | undefined {
  try {
    return inflateRawSync(data, { maxOutputLength: Math.max(1, declared) }).length;
  } catch {
    return undefined;
  }
}
