import { constants, deflateRawSync, deflateSync } from 'node:zlib';

/**
 * Hostile documents for tests (this package's and the daemon's fuzz suite): small files that
 * decode to gigabytes, built in milliseconds without ever holding what they decode to.
 */

/** One PDF object: its number is its place in the list, plus one. */
export type PdfObject = string | { dict: string; data: Buffer };

/**
 * A PDF with these objects (object 1 the catalog, 2 the page tree, 3 the page, 4 its content
 * unless `objects` says otherwise, ...), a classic xref table and `trailer` keys added.
 */
export function pdfOf(objects: PdfObject[], trailer = ''): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n')];
  const offsets: number[] = [];
  let length = parts[0]?.length ?? 0;
  for (const [index, object] of objects.entries()) {
    offsets.push(length);
    const part =
      typeof object === 'string'
        ? Buffer.from(`${index + 1} 0 obj ${object} endobj\n`)
        : Buffer.concat([
            Buffer.from(`${index + 1} 0 obj ${object.dict} stream\n`),
            object.data,
            Buffer.from('\nendstream endobj\n'),
          ]);
    parts.push(part);
    length += part.length;
  }
  const table = offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  parts.push(
    Buffer.from(
      `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${table}trailer << /Size ${objects.length + 1} /Root 1 0 R ${trailer}>>\nstartxref\n${length}\n%%EOF\n`,
    ),
  );
  return Buffer.concat(parts);
}

/** A one-page PDF whose page content is `content`, written with the dictionary `dict` (and `/Length`). */
export function pagePdf(dict: string, content: Buffer, extra: PdfObject[] = [], trailer = ''): Buffer {
  return pdfOf(
    [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
      { dict: `<< /Length ${content.length} ${dict} >>`, data: content },
      '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
      ...extra,
    ],
    trailer,
  );
}

/** Text a page shows: "BT ... (text) Tj ET". */
export const showText = (text: string) => Buffer.from(`BT /F1 12 Tf 72 712 Td (${text}) Tj ET\n`);

/**
 * A zlib stream of `mebibytes` MiB of zeros, about 1 KB per MiB: one fully flushed deflate
 * segment of 1 MiB of zeros repeated (a full flush leaves no reference across segments), a
 * final empty block and the right Adler-32, so every inflater accepts it to its end.
 */
export function zerosZlib(mebibytes: number): Buffer {
  const adler = Buffer.alloc(4);
  // Adler-32 of n zeros: a stays 1, b = n mod 65521.
  adler.writeUInt32BE((((mebibytes * 1024 * 1024) % 65_521) * 65_536 + 1) >>> 0);
  return Buffer.concat([Buffer.from([0x78, 0xda]), zerosDeflate(mebibytes), adler]);
}

/** Raw deflate data of `mebibytes` MiB of zeros (as {@link zerosZlib}, without its wrapper). */
export function zerosDeflate(mebibytes: number): Buffer {
  const segment = deflateRawSync(Buffer.alloc(1024 * 1024), {
    level: 9,
    finishFlush: constants.Z_FULL_FLUSH,
  });
  return Buffer.concat([
    ...Array.from({ length: mebibytes }, () => segment),
    deflateRawSync(Buffer.alloc(0)),
  ]);
}

/**
 * A zlib stream that zlib refuses at once and pdf.js inflates in full: its first block copies
 * 3 bytes from 1 byte back, before any byte was made (zlib: "invalid distance too far back";
 * pdf.js reads zeros there and goes on), then `mebibytes` MiB of zeros.
 */
export function lenientOnlyZlib(mebibytes: number): Buffer {
  // Fixed-Huffman block, not final: bits 0 (BFINAL), 1 0 (BTYPE 01, LSB first), then
  // length code 257 (0000001), distance code 0 (00000), end of block (0000000); then an
  // empty stored block (0, 00, padding, LEN 0, NLEN 0xFFFF) to come back to a byte boundary.
  const bits = [0, 1, 0, ...'0000001', ...'00000', ...'0000000', 0, 0, 0].map(Number);
  const bytes: number[] = [];
  for (let at = 0; at < bits.length; at += 8)
    bytes.push(bits.slice(at, at + 8).reduce((byte, bit, index) => byte | (bit << index), 0));
  return Buffer.concat([
    Buffer.from([0x78, 0xda, ...bytes, 0x00, 0x00, 0xff, 0xff]),
    zerosDeflate(mebibytes),
    Buffer.alloc(4),
  ]);
}

/** `[/FlateDecode /FlateDecode]` data inflating to `mebibytes` MiB of zeros: a few KB. */
export const nestedFlate = (mebibytes: number) => deflateSync(zerosZlib(mebibytes), { level: 9 });

/**
 * LZW codes (`EarlyChange` 1) of `repeats` copies of a 3,839-byte run of zeros: the
 * dictionary is filled with ever longer runs (codes 258 to 4095, each "the last run plus
 * one zero"), then its longest entry is repeated; 12 bits make 3,839 bytes.
 */
export function lzwZeros(repeats: number): Buffer {
  const codes = [0];
  for (let code = 258; code < 4096; code += 1) codes.push(code);
  for (let index = 0; index < repeats; index += 1) codes.push(4095);
  codes.push(257);
  return packLzw(codes);
}

/** LZW codes of `text`, one code per byte (valid, if no smaller than the text). */
export const lzwLiteral = (text: Buffer) => packLzw([...text, 257]);

/** Packs codes MSB first at pdf.js's code lengths (EarlyChange 1, no clear code). */
function packLzw(codes: number[]): Buffer {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  let next = 258;
  let length = 9;
  for (const [index, code] of codes.entries()) {
    value = (value << length) | code;
    bits += length;
    while (bits >= 8) {
      bits -= 8;
      out.push((value >>> bits) & 0xff);
    }
    value &= (1 << bits) - 1;
    // The decoder adds an entry on every code after the first.
    if (index > 0 && next < 4096) {
      next += 1;
      if (((next + 1) & next) === 0) length = Math.min(length + 1, 12);
    }
  }
  if (bits > 0) out.push((value << (8 - bits)) & 0xff);
  return Buffer.from(out);
}

/** A ZIP entry: deflated `data`, headers declaring `declared` bytes (its real size by default). */
export interface ZipEntry {
  name: string;
  data: Buffer;
  declared?: number;
  /** Raw deflate data to store instead of deflating `data`. */
  packed?: Buffer;
}

/**
 * A ZIP of deflated entries. `listed` entries (all by default) are counted in the end record;
 * the others still follow in the central directory, as JSZip reads them.
 */
export function zipOf(entries: ZipEntry[], listed = entries.length): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const packed = entry.packed ?? deflateRawSync(entry.data);
    const size = entry.declared ?? entry.data.length;
    // Local and central headers share these fields; the central one has "version made by"
    // before them, so they start 2 bytes later (`at` is where "version needed" stands).
    const header = (length: number, signature: number, at: number) => {
      const buffer = Buffer.alloc(length);
      buffer.writeUInt32LE(signature, 0);
      buffer.writeUInt16LE(20, at);
      buffer.writeUInt16LE(8, at + 4);
      buffer.writeUInt32LE(packed.length, at + 14);
      buffer.writeUInt32LE(size, at + 18);
      buffer.writeUInt16LE(name.length, at + 22);
      return buffer;
    };
    const local = header(30, 0x04034b50, 4);
    const central = header(46, 0x02014b50, 6);
    central.writeUInt16LE(20, 4);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, packed);
    centrals.push(central, name);
    offset += local.length + name.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(listed, 8);
  end.writeUInt16LE(listed, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** The `[Content_Types].xml` a DOCX needs for mammoth to look for `word/document.xml`. */
export const DOCX_CONTENT_TYPES = Buffer.from(
  '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
);

/** Runs `work` and answers how far the process's array-buffer memory rose while it ran (sampled every 5 ms). */
export async function arrayBufferRise(work: () => Promise<unknown>): Promise<number> {
  const before = process.memoryUsage().arrayBuffers;
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().arrayBuffers);
  }, 5);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, process.memoryUsage().arrayBuffers) - before;
}
