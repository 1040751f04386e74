import type { AgentTool, DefineTool, ToolContext } from '@agentd/contracts';
import { z } from 'zod';
import { KEY_NAMES } from './internal/keys.js';
import type { TerminalService } from './terminal-service.js';

export type { AgentTool, ToolContext } from '@agentd/contracts';

const sessionId = z.string().min(1).max(64).describe('The id terminal_open answered');

/** Parameter schemas of the terminal tools. */
export const terminalToolSchemas = {
  open: z
    .object({
      command: z
        .string()
        .min(1)
        .max(4096)
        .describe('Program to run, e.g. bash, python3, node (looked up on PATH)'),
      args: z.array(z.string().max(4096)).max(100).optional().describe('Its arguments, e.g. ["-i"]'),
      input: z
        .string()
        .max(100_000)
        .optional()
        .describe('Task text typed into the program right after it starts'),
      cols: z.number().int().min(20).max(500).optional(),
      rows: z.number().int().min(5).max(300).optional(),
    })
    .strict(),
  send: z
    .object({
      sessionId,
      text: z.string().max(100_000).optional().describe('Text to type'),
      keys: z
        .array(z.string().min(1).max(20))
        .max(100)
        .optional()
        .describe(`Keys pressed after the text: ${KEY_NAMES.join(', ')}`),
      enter: z.boolean().optional().describe('Press Enter at the end'),
    })
    .strict(),
  read: z
    .object({
      sessionId,
      scrollback: z
        .number()
        .int()
        .min(0)
        .max(100_000)
        .optional()
        .describe('Lines above the screen to include'),
    })
    .strict(),
  wait: z
    .object({
      sessionId,
      quietMs: z
        .number()
        .int()
        .min(10)
        .max(60_000)
        .optional()
        .describe('Silence that counts as done (default 500)'),
      timeoutMs: z.number().int().min(10).max(600_000).optional().describe('Give up after this long'),
    })
    .strict(),
  close: z.object({ sessionId }).strict(),
  list: z.object({}).strict(),
};

/** One tool of the list below; see {@link DefineTool}. */
const tool: DefineTool = (name, description, params, handler) => ({ name, description, params, handler });

/**
 * Terminal drives as agent tools: `terminal_open`, `terminal_send`, `terminal_read`,
 * `terminal_wait`, `terminal_close` and `terminal_list`, each on the calling agent's own
 * drives. Registered with the agent runtime they pass the tool runner's gates, so an approval
 * rule on `terminal_open` can require a yes before a program starts.
 */
export function createTerminalTools(service: TerminalService): AgentTool[] {
  const s = terminalToolSchemas;
  const drive = (context: ToolContext) => ({ sessionKey: context.sessionKey, signal: context.signal });
  return [
    tool(
      'terminal_open',
      'Start an interactive program (a shell, a REPL, a CLI tool) in a terminal in your workspace; answers its sessionId.',
      s.open,
      (params, context) => service.open(context.agentId, params, drive(context)),
    ),
    tool('terminal_send', 'Type text and press keys in a terminal session.', s.send, (params, context) =>
      service.send(context.agentId, params.sessionId, params, drive(context)),
    ),
    tool('terminal_read', 'The screen of a terminal session as text.', s.read, (params, context) =>
      service.read(context.agentId, params.sessionId, params),
    ),
    tool(
      'terminal_wait',
      'Wait until a terminal session has been quiet for a moment (or its program exits), then read its screen.',
      s.wait,
      (params, context) => service.wait(context.agentId, params.sessionId, params, drive(context)),
    ),
    tool(
      'terminal_close',
      'End a terminal session and every process it started.',
      s.close,
      (params, context) => service.close(context.agentId, params.sessionId),
    ),
    tool('terminal_list', 'Your open terminal sessions.', s.list, async (_params, context) => ({
      sessions: service.list(context.agentId),
    })),
  ];
}
