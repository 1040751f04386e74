import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { trajectoryFileName } from './evidence.js';
import type { AgentTool } from './types.js';

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

/** Name of the built-in tool that pages through an offloaded result of the same session. */
export const OFFLOAD_READ_TOOL = 'offload_read';

/** Characters `offload_read` answers at most per call. @default 20000 */
export const OFFLOAD_READ_MAX_CHARS = 20_000;

const offloadReadParams = z
  .object({
    /** The `diskPathRel` the truncated result named, e.g. `obs/offloads/<session>/<n>-<hash>.json`. */
    path: z.string().min(1).max(300),
    /** First character to return. */
    offset: z.number().int().min(0).default(0),
    /** Characters to return. */
    length: z.number().int().min(1).max(OFFLOAD_READ_MAX_CHARS).default(OFFLOAD_READ_MAX_CHARS),
  })
  .strict();

/**
 * The `offload_read` tool: returns a window of an offloaded tool result, so a model that got a
 * truncated result with a pointer can read on. A session reads only its own offloads (the path
 * must lie in the session's offload directory); an agent gets the tool when its `tools` allow it.
 */
export function createOffloadReadTool(dataDir: string): AgentTool<z.output<typeof offloadReadParams>> {
  return {
    name: OFFLOAD_READ_TOOL,
    description:
      'Read part of a large tool result that was cut short: pass the path the truncated result named, ' +
      'and an offset to continue from (nextOffset of the previous read).',
    params: offloadReadParams as unknown as z.ZodType<z.output<typeof offloadReadParams>>,
    async handler({ path, offset, length }, context) {
      const own = `${OFFLOAD_DIR}/${offloadSessionDir(context.sessionKey)}/`;
      const name = path.startsWith(own) ? path.slice(own.length) : '';
      if (!/^[0-9]+-[0-9a-f]{16}\.json$/.test(name)) {
        throw new Error(`${path} is not an offloaded result of this session`);
      }
      let text: string;
      try {
        text = await readFile(join(dataDir, path), 'utf8');
      } catch {
        throw new Error(
          `${path} is no longer stored (offloads are deleted after observability.logRotation.maxAgeDays)`,
        );
      }
      const end = Math.min(text.length, offset + length);
      return {
        path,
        offset,
        text: text.slice(offset, end),
        totalChars: text.length,
        nextOffset: end < text.length ? end : null,
      };
    },
  };
}
