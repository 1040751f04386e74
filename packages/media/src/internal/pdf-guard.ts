import { constants, inflateSync } from 'node:zlib';
import { MediaError } from '../errors.js';

/** Most bytes the Flate-compressed non-image streams of a PDF may inflate to, together. */
export const MAX_PDF_INFLATED_BYTES = 128 * 1024 * 1024;

const STREAM = /stream(?:\r\n|\n|\r)/g;
const FLATE_FIRST = /\/Filter\s*(?:\[\s*)?\/(?:FlateDecode|Fl)\b/;
const IMAGE = /\/Subtype\s*\/Image\b/;

/**
 * Checks a PDF before pdf.js reads it: pdf.js inflates each content stream in full, with no
 * cap, so a 300 KB PDF whose page content is 300 MB of deflated spaces took 600 MB and seven
 * seconds (a 25 MiB one would take gigabytes). Every stream whose first filter is Flate,
 * images aside (text extraction never decodes them), is inflated here with zlib's output
 * capped at what is left of {@link MAX_PDF_INFLATED_BYTES}; past it the PDF is `TOO_LARGE`.
 * Streams that do not inflate are left to pdf.js, which reports them.
 */
export function checkPdf(bytes: Uint8Array, field: string): void {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = buffer.toString('latin1');
  let used = 0;
  // Each dictionary is looked for between the previous stream keyword and this one (64 KiB at
  // most), so the scan stays linear however many `stream` keywords a hostile file holds.
  let previous = 0;
  for (const match of text.matchAll(STREAM)) {
    const at = match.index ?? 0;
    const window = text.slice(Math.max(previous, at - 65_536), at);
    previous = at + match[0].length;
    if (!/>>\s*$/.test(window.slice(-16))) continue;
    const dictionary = window.slice(Math.max(0, window.lastIndexOf(' obj')));
    if (!FLATE_FIRST.test(dictionary) || IMAGE.test(dictionary)) continue;
    const start = previous;
    const endstream = text.indexOf('endstream', start);
    const data = buffer.subarray(start, endstream < 0 ? buffer.length : endstream);
    try {
      used += inflateSync(data, {
        maxOutputLength: MAX_PDF_INFLATED_BYTES - used + 1,
        finishFlush: constants.Z_SYNC_FLUSH,
      }).length;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ERR_BUFFER_TOO_LARGE') continue;
      used = MAX_PDF_INFLATED_BYTES + 1;
    }
    if (used > MAX_PDF_INFLATED_BYTES)
      throw new MediaError(
        'TOO_LARGE',
        `${field} is a PDF whose streams inflate past ${MAX_PDF_INFLATED_BYTES} bytes`,
        {
          data: { field, maxBytes: MAX_PDF_INFLATED_BYTES },
        },
      );
  }
}
