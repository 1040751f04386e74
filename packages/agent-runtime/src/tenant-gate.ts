import type { ToolGate } from './tool-gates.js';

/** The name of the runtime's tenant gate in the tool runner's chain. */
export const TENANT_GATE = 'tenant';

/**
 * The one check that keeps a tenant's turn within its tenant, whatever path the call took: a
 * model's call in a turn, a graph node's or a sub-agent's turn, a turn asked for over `/mcp`,
 * or a call routed from a jailed script (`AgentRuntime.invokeTool`). Every one of them runs
 * through the tool runner, which hands this gate the turn's memory tenant.
 *
 * In a turn with a memory tenant only tools that declare `tenantScoped` run; every other tool
 * may act on state every tenant shares (an agent's workspace, the browser, a terminal drive,
 * the orchestrate jail, an MCP server) and is refused with `denied`. A turn without a memory
 * tenant (the operator's, an unbound token's) is not narrowed. An unknown tool is left to the
 * runner, which answers `unknown_tool`.
 */
export function tenantGate(): ToolGate {
  return {
    name: TENANT_GATE,
    before(call) {
      if (call.memoryTenant === undefined || call.tool === undefined || call.tool.tenantScoped === true) {
        return { allow: true };
      }
      return {
        allow: false,
        errorKind: 'denied',
        message: `${call.toolName} may act on state every tenant shares; a turn of tenant '${call.memoryTenant}' may not use it`,
      };
    },
  };
}
