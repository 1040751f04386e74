import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { trajectoryFileName } from './records.js';

/** Directory of offloaded tool results, relative to the data dir: `<OFFLOAD_DIR>/<session stem>/<call>.json`. */
export const OFFLOAD_DIR = 'obs/offloads';

/** Largest serialised tool result kept on disk (bytes); a larger one is not stored (`resolved: false`). */
export const OFFLOAD_MAX_BYTES = 10 * 1024 * 1024;

/** Where one tool result goes and whether it got there. */
export interface OffloadOutcome {
  /** Path relative to the data dir, `/`-separated. */
  diskPathRel: string;
  /** UTF-8 bytes of the serialised result. */
  bytes: number;
  /** Whether the file holds the full result (false above the cap or when the write failed). */
  resolved: boolean;
  /** Why it is not resolved. */
  reason?: 'too_large' | 'write_failed';
  /** The write error, when `reason` is `write_failed` (for the log only). */
  error?: unknown;
}

/**
 * The directory of a session's offloads: the stem of its trajectory file, so the two are
 * easy to match and any session key maps to one short, safe name.
 */
export function offloadSessionDir(sessionKey: string): string {
  return trajectoryFileName(sessionKey).replace(/\.jsonl$/, '');
}

/** Counts offloads in this process, so two calls in the same millisecond never share a name. */
let written = 0;

/**
 * File name of one offloaded result: the call's order in its turn and a hash of the trace and
 * tool-call ids, the time and a per-process counter. Ids come from callers and models, so only
 * the hash reaches the path; the name stays short enough that `diskPathRel` of any session key
 * fits the evidence store's 128-character id limit.
 */
export function offloadFileName(input: {
  ts: number;
  seq: number;
  traceId: string;
  toolCallId: string;
}): string {
  written += 1;
  const hash = createHash('sha256')
    .update(`${input.traceId}\n${input.toolCallId}\n${input.ts}\n${process.pid}\n${written}`)
    .digest('hex')
    .slice(0, 16);
  return `${Math.max(0, Math.trunc(input.seq))}-${hash}.json`;
}

/**
 * Writes the full serialised result of one tool call under `<dataDir>/obs/offloads/`. Never
 * throws: a result above `maxBytes` is not stored and a failed write is reported in the outcome,
 * so an offload can never fail a turn. An existing file is never overwritten.
 */
export async function writeOffload(input: {
  dataDir: string;
  sessionKey: string;
  traceId: string;
  toolCallId: string;
  seq: number;
  ts: number;
  text: string;
  /** @default OFFLOAD_MAX_BYTES */
  maxBytes?: number;
}): Promise<OffloadOutcome> {
  const dir = `${OFFLOAD_DIR}/${offloadSessionDir(input.sessionKey)}`;
  const diskPathRel = `${dir}/${offloadFileName(input)}`;
  const bytes = Buffer.byteLength(input.text);
  if (bytes > (input.maxBytes ?? OFFLOAD_MAX_BYTES)) {
    return { diskPathRel, bytes, resolved: false, reason: 'too_large' };
  }
  try {
    await mkdir(join(input.dataDir, dir), { recursive: true });
    await writeFile(join(input.dataDir, diskPathRel), input.text, { flag: 'wx' });
    return { diskPathRel, bytes, resolved: true };
  } catch (error) {
    return { diskPathRel, bytes, resolved: false, reason: 'write_failed', error };
  }
}
