import type { AgentTool, DefineTool, ToolContext } from '@agentd/contracts';
import { z } from 'zod';
import type { AutonomyService } from './autonomy-service.js';
import type { RunView } from './run-view.js';

const MAX_WAIT_MS = 600_000;

const spawnParams = z
  .object({
    task: z.string().min(1).max(100_000).describe('What the sub-agent should do'),
    agentId: z.string().min(1).max(64).optional().describe('Agent to run the task; your own when absent'),
    wait: z.boolean().optional().describe('Wait for the sub-agent to finish and return its answer'),
    timeoutMs: z.number().int().min(1).max(MAX_WAIT_MS).optional().describe('Longest wait, in ms'),
  })
  .strict();

const waitParams = z
  .object({
    runId: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe('Run to wait for; all your running sub-agents when absent'),
    timeoutMs: z.number().int().min(1).max(MAX_WAIT_MS).optional().describe('Longest wait, in ms'),
  })
  .strict();

const listParams = z
  .object({
    status: z.enum(['running', 'completed', 'failed', 'killed', 'timeout', 'orphaned']).optional(),
  })
  .strict();

/** One tool of the list below; see {@link DefineTool}. */
const tool: DefineTool = (name, description, params, handler) => ({ name, description, params, handler });

/**
 * The agent tools of sub-agents: `subagent_spawn` (optionally waiting for the answer),
 * `subagent_wait`, `subagent_list` (the caller's own children) and `capabilities_introspect`
 * (the calling run's own budget; identity from the turn, never a parameter). Limits and the
 * child's tool set are the service's; a tool an agent is not allowed stays unreachable.
 */
export function createAutonomyTools(service: AutonomyService): AgentTool[] {
  /** Waits for the runs as long as the call allows, until the turn is cancelled. */
  const waitFor = (runIds: string[], timeoutMs: number | undefined, context: ToolContext) =>
    service.wait(runIds, { timeoutMs: timeoutMs ?? MAX_WAIT_MS, signal: context.signal });
  // Each keeps to the calling session's own runs; a child inherits the turn's memory tenant.
  const tenantScoped = (tools: AgentTool[]): AgentTool[] =>
    tools.map((each) => ({ ...each, tenantScoped: true }));
  return tenantScoped([
    tool(
      'subagent_spawn',
      'Start a sub-agent on a task in its own session. Answers its runId at once, or its final answer with wait: true.',
      spawnParams,
      async (params, context) => {
        const spawned = await service.spawn({
          parentSessionKey: context.sessionKey,
          parentAgentId: context.agentId,
          task: params.task,
          agentId: params.agentId,
          memoryTenant: context.memoryTenant,
        });
        if (!params.wait) return spawned;
        const [run] = await waitFor([spawned.runId], params.timeoutMs, context);
        return run;
      },
    ),
    tool(
      'subagent_wait',
      'Wait for one of your sub-agent runs (or all running ones) to finish; answers their records.',
      waitParams,
      async (params, context) => {
        const runIds = params.runId
          ? [await ownRun(service, context.sessionKey, params.runId)]
          : (await service.list({ status: 'running', parentSessionKey: context.sessionKey, limit: 100 })).map(
              (run) => run.runId,
            );
        return { runs: await waitFor(runIds, params.timeoutMs, context) };
      },
    ),
    tool(
      'subagent_list',
      'List the sub-agent runs you spawned, newest first.',
      listParams,
      async (params, context) => {
        const runs = await service.list({
          parentSessionKey: context.sessionKey,
          status: params.status,
          limit: 50,
        });
        return { runs: runs.map(listedRun) };
      },
    ),
    tool(
      'capabilities_introspect',
      "Your own run's capabilities, remaining budget (tokens, cost, tool calls), the sub-agent quota, and the MCP servers you may use (state, tools, last error).",
      z.object({}).strict(),
      (_params, context) => service.introspect({ sessionKey: context.sessionKey, agentId: context.agentId }),
    ),
  ]);
}

/** A run as `subagent_list` shows it: task and answer cut short, absent fields left out. */
function listedRun({ runId, status, agentId, task, startedAt, completedAt, response, error }: RunView) {
  return {
    runId,
    status,
    agentId,
    task: task.slice(0, 200),
    startedAt,
    ...(completedAt !== undefined ? { completedAt } : {}),
    ...(response !== undefined ? { response: response.slice(0, 2000) } : {}),
    ...(error !== undefined ? { error } : {}),
  };
}

/** A run id the caller spawned; another session's run is refused as if unknown. */
async function ownRun(service: AutonomyService, sessionKey: string, runId: string): Promise<string> {
  const run = await service.status(runId).catch(() => undefined);
  if (!run || run.parentKey !== sessionKey) throw new Error(`Run not found among your sub-agents: ${runId}`);
  return runId;
}
