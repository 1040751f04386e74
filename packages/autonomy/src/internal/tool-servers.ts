import type { ToolServerStatus } from '@agentd/contracts';
import { matchesAny } from '../tool-set.js';
import type { AutonomyContext } from './context.js';

/** One tool server in the `capabilities.introspect` answer. */
export interface IntrospectToolServer {
  id: string;
  state: string;
  /** Its tools the caller may call (all of them for a gateway caller). */
  tools: string[];
  lastError: string | null;
}

/**
 * The tool servers (MCP) a caller sees. A gateway client sees every server and all its tools
 * (the daemon-wide picture its runs draw on). An agent (the `capabilities_introspect` tool)
 * sees only the servers configured for it, each narrowed to the tools it may actually call:
 * its own allow-list and, inside a sub-agent run, the run's capability set.
 */
export function toolServersFor(
  ctx: AutonomyContext,
  caller: { agentId: string; capabilities: readonly string[] | undefined } | undefined,
): IntrospectToolServer[] {
  const servers: readonly ToolServerStatus[] = ctx.toolServers.current?.() ?? [];
  const allowed = caller ? (ctx.toolsOf(caller.agentId) ?? []) : undefined;
  const shown: IntrospectToolServer[] = [];
  for (const server of servers) {
    if (caller && !server.agents.includes('*') && !server.agents.includes(caller.agentId)) continue;
    let tools = [...server.tools];
    if (allowed) tools = tools.filter((tool) => allowed.includes(tool));
    const capabilities = caller?.capabilities;
    if (capabilities) tools = tools.filter((tool) => matchesAny(capabilities, tool));
    shown.push({ id: server.id, state: server.state, tools, lastError: server.lastError });
  }
  return shown;
}
