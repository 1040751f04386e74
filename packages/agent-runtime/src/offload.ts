import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OFFLOAD_DIR, offloadSessionDir } from '@agentd/evidence';
import { z } from 'zod';
import type { AgentTool } from './types.js';

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
    // It reads the calling session's own offloads only.
    tenantScoped: true,
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
