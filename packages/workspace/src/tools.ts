import type { AgentTool, DefineTool, ToolContext } from '@agentd/contracts';
import { z } from 'zod';
import type { WorkspaceActor } from './internal/attribution.js';
import type { WorkspaceService } from './workspace-service.js';

export type { AgentTool, ToolContext } from '@agentd/contracts';

const path = z.string().min(1).max(4096).describe('Path relative to your workspace root, e.g. notes/todo.md');

/** Parameter schemas of the workspace tools. */
export const workspaceToolSchemas = {
  read: z.object({ path }).strict(),
  write: z
    .object({
      path,
      content: z
        .string()
        .max(256 * 1024 * 1024)
        .describe('The whole new content of the file'),
    })
    .strict(),
  edit: z
    .object({
      path,
      oldText: z
        .string()
        .min(1)
        .max(1_000_000)
        .describe('Exact text to replace; must occur once unless replaceAll'),
      newText: z.string().max(1_000_000).describe('Replacement text'),
      replaceAll: z.boolean().optional().describe('Replace every occurrence'),
    })
    .strict(),
  list: z
    .object({
      path: z
        .string()
        .max(4096)
        .optional()
        .describe('Directory relative to the workspace root; default the root'),
    })
    .strict(),
  grep: z
    .object({
      pattern: z.string().min(1).max(1000).describe('Text to find (a fixed string unless regex is true)'),
      path: z
        .string()
        .max(4096)
        .optional()
        .describe('File or directory to search; default the whole workspace'),
      regex: z.boolean().optional().describe('Treat pattern as a POSIX extended regular expression'),
      ignoreCase: z.boolean().optional(),
    })
    .strict(),
  glob: z
    .object({
      pattern: z.string().min(1).max(1000).describe('Glob over workspace paths, e.g. **/*.md or notes/*'),
    })
    .strict(),
};

/** One tool of the list below; see {@link DefineTool}. */
const tool: DefineTool = (name, description, params, handler) => ({ name, description, params, handler });

const actorOf = (context: ToolContext): WorkspaceActor => ({
  kind: 'agent',
  agentId: context.agentId,
  sessionKey: context.sessionKey,
});

/**
 * The workspace as agent tools: `workspace_read`, `workspace_write`, `workspace_edit` (exact
 * string replace), `workspace_list`, `workspace_grep` and `workspace_glob`, each over the
 * calling agent's own workspace (created on first use when `autoInit` is on). Writes are
 * recorded and attributed to the agent and session in the next commit. The daemon registers
 * them with the agent runtime, so every call passes the tool runner's gates.
 */
export function createWorkspaceTools(service: WorkspaceService): AgentTool[] {
  const s = workspaceToolSchemas;
  return [
    tool(
      'workspace_read',
      'Read a text file of your workspace (capped; binary files are reported, not shown).',
      s.read,
      (params, context) => service.readFile(context.agentId, params.path, { create: true }),
    ),
    tool('workspace_write', 'Create or overwrite a file of your workspace.', s.write, (params, context) =>
      service.writeFile(context.agentId, params.path, params.content, actorOf(context)),
    ),
    tool(
      'workspace_edit',
      'Replace exact text in a file of your workspace; oldText must occur exactly once unless replaceAll.',
      s.edit,
      (params, context) => service.editFile(context.agentId, params, actorOf(context)),
    ),
    tool('workspace_list', 'List a directory of your workspace.', s.list, (params, context) =>
      service.listDir(context.agentId, params.path ?? '', { create: true }),
    ),
    tool(
      'workspace_grep',
      'Find lines in the text files of your workspace: path, line number and text of each match.',
      s.grep,
      (params, context) => service.grep(context.agentId, params),
    ),
    tool(
      'workspace_glob',
      'List the files of your workspace whose path matches a glob.',
      s.glob,
      (params, context) => service.glob(context.agentId, params.pattern),
    ),
  ];
}
