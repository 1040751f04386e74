/** What the bytes are, by their content rather than by what the caller claimed. */
export interface SniffResult {
  /** MIME type detected (`audio/ogg`, `application/pdf`, `text/plain`, ...), or `application/octet-stream`. */
  mimeType: string;
  /** Broad family, which decides the operations that accept the bytes. */
  kind: 'audio' | 'video' | 'image' | 'document' | 'text' | 'unknown';
}

const DOCUMENT_TYPES = new Set([
  'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
]);

// Containers file-type names video/* that often hold audio only (voice notes recorded by browsers).
const AUDIO_CAPABLE_VIDEO = new Set(['video/webm', 'video/mp4', 'video/quicktime', 'video/x-matroska']);

/** True when `mimeType` names a container that may carry only an audio track. */
export function mayHoldAudio(mimeType: string): boolean {
  return mimeType.startsWith('audio/') || AUDIO_CAPABLE_VIDEO.has(mimeType);
}

/**
 * Sniffs the MIME type from magic bytes (`file-type`), then, for bytes it does not know,
 * tells text from binary: text without NUL bytes in its first 8 KiB is `text/html` when it
 * opens like an HTML page and `text/plain` otherwise (Markdown included).
 */
export async function sniffMime(bytes: Uint8Array): Promise<SniffResult> {
  // file-type's signature table is imported on the first sniff, not with the package.
  const { fileTypeFromBuffer } = await import('file-type');
  const found = await fileTypeFromBuffer(bytes);
  if (found) {
    // file-type may add parameters (`audio/ogg; codecs=opus`); the bare type is what callers compare.
    const mimeType = (found.mime as string).split(';')[0]?.trim() ?? 'application/octet-stream';
    const family = mimeType.split('/')[0];
    if (DOCUMENT_TYPES.has(mimeType)) return { mimeType, kind: 'document' };
    if (family === 'audio' || family === 'video' || family === 'image') return { mimeType, kind: family };
    if (mimeType === 'application/ogg') return { mimeType: 'audio/ogg', kind: 'audio' };
    return { mimeType, kind: 'unknown' };
  }
  const head = bytes.subarray(0, 8192);
  if (head.length === 0 || head.includes(0)) return { mimeType: 'application/octet-stream', kind: 'unknown' };
  const start = Buffer.from(head.subarray(0, 1024)).toString('latin1').trimStart().toLowerCase();
  if (start.startsWith('<!doctype html') || start.startsWith('<html') || /<(head|body)[\s>]/.test(start))
    return { mimeType: 'text/html', kind: 'text' };
  return { mimeType: 'text/plain', kind: 'text' };
}
