import { describe, expect, it } from 'vitest';
import { agentCapabilityClass, type CapabilityClassSource } from './capability-class.js';

const runtime: CapabilityClassSource = {
  agents: {
    get(agentId) {
      const agents: Record<string, { provider: string; model?: string }> = {
        pinned: { provider: 'local', model: 'tiny' },
        first: { provider: 'local' },
        hosted: { provider: 'cloud', model: 'big' },
        odd: { provider: 'cloud', model: 'weird' },
      };
      const agent = agents[agentId];
      if (!agent) throw new Error(`agent not found: ${agentId}`);
      return agent;
    },
  },
  models: () => ({
    providers: [
      { id: 'local', models: [{ model: 'mid-model' }, { model: 'tiny' }] },
      { id: 'cloud', capabilityClass: 'frontier', models: [{ model: 'big' }, { model: 'weird' }] },
    ],
    models: [
      { provider: 'local', model: 'mid-model', capabilityClass: 'mid' },
      { provider: 'local', model: 'tiny', capabilityClass: 'nano' },
      { provider: 'cloud', model: 'big' },
      { provider: 'cloud', model: 'weird', capabilityClass: 'enormous' },
    ],
  }),
};

describe('agentCapabilityClass', () => {
  it("answers the class of the agent's model, its provider's first model, or its provider", () => {
    expect(agentCapabilityClass(runtime, 'pinned')).toBe('nano');
    expect(agentCapabilityClass(runtime, 'first')).toBe('mid');
    expect(agentCapabilityClass(runtime, 'hosted')).toBe('frontier');
  });

  it('answers unknown for a missing agent or a class outside the four', () => {
    expect(agentCapabilityClass(runtime, 'ghost')).toBe('unknown');
    expect(agentCapabilityClass(runtime, 'odd')).toBe('unknown');
  });
});
