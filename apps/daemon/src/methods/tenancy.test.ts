import type { ToolGateCall } from '@agentd/agent-runtime';
import { describe, expect, it } from 'vitest';
import { sharedToolsGate } from './tenancy.js';

// The gate reads the tool's name and the turn's memory tenant only.
const call = (toolName: string, memoryTenant?: string) =>
  ({ toolName, memoryTenant }) as unknown as ToolGateCall;

describe('sharedToolsGate', () => {
  it("refuses browser tools in a tenant's turn and lets every other call through", () => {
    const gate = sharedToolsGate();
    expect(gate.before?.(call('browser_navigate', 'acme'))).toEqual({
      allow: false,
      errorKind: 'denied',
      message: "browser_navigate acts on state every tenant shares; a turn of tenant 'acme' may not use it",
    });
    expect(gate.before?.(call('browser_navigate'))).toEqual({ allow: true });
    expect(gate.before?.(call('memory_search', 'acme'))).toEqual({ allow: true });
    // The graph tools author as the turn's tenant (graph-engine's tools), so they stay open.
    expect(gate.before?.(call('graph_execute', 'acme'))).toEqual({ allow: true });
  });

  it("refuses an agent's workspace and terminal tools in a tenant's turn", () => {
    const gate = sharedToolsGate();
    for (const tool of ['workspace_write', 'workspace_read', 'terminal_open', 'terminal_send']) {
      expect(gate.before?.(call(tool, 'acme')), tool).toMatchObject({ allow: false, errorKind: 'denied' });
      expect(gate.before?.(call(tool)), tool).toEqual({ allow: true });
    }
  });
});
