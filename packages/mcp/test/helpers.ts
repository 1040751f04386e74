import type { AgentTool } from '@agentd/contracts';
import { expect } from 'vitest';

/** The agent's tool registry as the host sees it: a name registered twice is refused. */
export function toolRegistry() {
  const tools = new Map<string, AgentTool>();
  return {
    tools,
    register: (list: AgentTool[]) => {
      for (const tool of list) {
        if (tools.has(tool.name)) throw new Error(`taken: ${tool.name}`);
        tools.set(tool.name, tool);
      }
    },
    unregister: (names: readonly string[]) => {
      for (const name of names) tools.delete(name);
    },
  };
}

/** Waits (up to 10 s) until `check` holds, then asserts it. */
export async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  expect(check()).toBe(true);
}
