import { MediaError } from './errors.js';
import { htmlToText, tidy } from './internal/html.js';
import { sniffMime } from './internal/sniff.js';
import { decodeText } from './internal/text-decoding.js';
import { checkPdf } from './internal/pdf-guard.js';
import { checkZip } from './internal/zip-guard.js';

/** The text of a document. */
export interface DocumentText {
  text: string;
  /** True when the text was cut at the character limit. */
  truncated: boolean;
  /** The MIME type the bytes were read as (sniffed, not the caller's claim). */
  mimeType: string;
  /** Pages of a PDF. */
  pages?: number;
  /** Characters before truncation. */
  totalChars: number;
}

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/**
 * Extracts the text of a PDF (`unpdf`), a DOCX (`mammoth`), an HTML page (its visible text)
 * or plain text in any encoding, keeping at most `maxChars` characters. The type comes from
 * the bytes: a claimed `mimeType` is only used to read text as Markdown or HTML.
 */
export async function extractDocument(
  bytes: Uint8Array,
  options: { maxChars: number; mimeType?: string | undefined; field?: string },
): Promise<DocumentText> {
  const field = options.field ?? 'data';
  const sniffed = await sniffMime(bytes);
  let text: string;
  let pages: number | undefined;
  if (sniffed.mimeType === 'application/pdf') {
    ({ text, pages } = await pdfText(bytes, field));
  } else if (sniffed.mimeType === DOCX) {
    text = await docxText(bytes, field);
  } else if (sniffed.kind === 'text') {
    const decoded = decodeText(bytes);
    const html = sniffed.mimeType === 'text/html' || options.mimeType === 'text/html';
    text = html ? await htmlToText(decoded, field) : tidy(decoded.replace(/\r\n?/g, '\n'));
  } else {
    throw new MediaError(
      'UNSUPPORTED_TYPE',
      `${field} is ${sniffed.mimeType}, not a document (PDF, DOCX, HTML or text)`,
      { data: { field, detected: sniffed.mimeType } },
    );
  }
  const mimeType =
    sniffed.kind === 'text' && options.mimeType === 'text/markdown' ? 'text/markdown' : sniffed.mimeType;
  const truncated = text.length > options.maxChars;
  return {
    text: truncated ? text.slice(0, options.maxChars) : text,
    truncated,
    mimeType,
    ...(pages === undefined ? {} : { pages }),
    totalChars: text.length,
  };
}

async function pdfText(bytes: Uint8Array, field: string): Promise<{ text: string; pages: number }> {
  // Before pdf.js: it would inflate a stream bomb in full. checkPdf answers the copy pdf.js
  // may take ownership of (detach), with the streams it did not vouch for left undecoded.
  const checked = await checkPdf(bytes, field);
  try {
    // pdf.js (inside unpdf) is large: imported on the first PDF, not with the package.
    const { extractText } = await import('unpdf');
    const { totalPages, text } = await extractText(checked, { mergePages: false });
    return { text: tidy(text.join('\n\n')), pages: totalPages };
  } catch (error) {
    throw new MediaError('CORRUPT_INPUT', `${field} is a PDF that could not be read: ${short(error)}`, {
      data: { field, detected: 'application/pdf' },
      cause: error,
    });
  }
}

async function docxText(bytes: Uint8Array, field: string): Promise<string> {
  // Before mammoth: its unzipper would inflate a zip bomb in full (see checkZip).
  checkZip(bytes, field);
  try {
    const { default: mammoth } = await import('mammoth');
    const result = await mammoth.extractRawText({ buffer: Buffer.from(bytes) });
    return tidy(result.value);
  } catch (error) {
    throw new MediaError('CORRUPT_INPUT', `${field} is a DOCX that could not be read: ${short(error)}`, {
      data: { field, detected: DOCX },
      cause: error,
    });
  }
}

function short(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]?.slice(0, 200) ?? 'unknown';
}
