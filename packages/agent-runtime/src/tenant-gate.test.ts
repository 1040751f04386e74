import { describe, expect, it } from 'vitest';
import { contextProbe, readTrajectory, startRuntime } from '../test/helpers.js';

/** Two probes recording the memory tenant they were handed: one shared, one tenant-scoped. */
function probes() {
  const shared = contextProbe('shared_probe', 'acts on state every tenant shares', (c) => c.memoryTenant);
  const scoped = contextProbe('scoped_probe', 'keeps within the tenant', (c) => c.memoryTenant);
  return { shared, scoped, tools: [shared.tool, { ...scoped.tool, tenantScoped: true }] };
}

const agents = { entries: { op: { name: 'Op', tools: ['shared_probe', 'scoped_probe'] } } };

describe('tenantGate', () => {
  it("refuses a tool that is not tenant-scoped in a tenant's turn, even with no gates given, and narrows no other turn", async () => {
    const { shared, tools } = probes();
    const t = await startRuntime({ agents, tools, offline: shared.offline });
    await t.runtime.runTurn({
      agentId: 'op',
      message: 'go',
      sessionKey: 'acme:chat:a',
      memoryTenant: 'acme',
    });
    expect(shared.seen).toEqual([]);
    const [call] = readTrajectory(t.dir, 'acme:chat:a').filter((record) => record.type === 'tool_call');
    expect(call).toMatchObject({ toolName: 'shared_probe', ok: false, errorKind: 'denied' });
    expect(call?.errorPreview).toContain("a turn of tenant 'acme' may not use it");

    await t.runtime.runTurn({ agentId: 'op', message: 'go', sessionKey: 'default:chat:b' });
    expect(shared.seen).toEqual([undefined]);
  });

  it("runs a tenant-scoped tool in a tenant's turn and hands it the tenant", async () => {
    const { scoped, tools } = probes();
    const t = await startRuntime({ agents, tools, offline: scoped.offline });
    await t.runtime.runTurn({
      agentId: 'op',
      message: 'go',
      sessionKey: 'acme:chat:a',
      memoryTenant: 'acme',
    });
    expect(scoped.seen).toEqual(['acme']);
  });

  it('narrows a call routed from outside a turn (invokeTool) by the memory tenant it carries', async () => {
    const { shared, scoped, tools } = probes();
    const t = await startRuntime({ agents, tools });
    const call = {
      agentId: 'op',
      sessionKey: 'acme:subagent:r1',
      signal: new AbortController().signal,
      input: {},
    };
    expect(
      await t.runtime.invokeTool({ ...call, toolName: 'shared_probe', memoryTenant: 'acme' }),
    ).toMatchObject({
      ok: false,
      errorKind: 'denied',
    });
    expect(shared.seen).toEqual([]);
    expect(await t.runtime.invokeTool({ ...call, toolName: 'scoped_probe', memoryTenant: 'acme' })).toEqual({
      ok: true,
      value: 'ok',
    });
    expect(scoped.seen).toEqual(['acme']);
    // The operator's script (no tenant) keeps its reach.
    expect(await t.runtime.invokeTool({ ...call, toolName: 'shared_probe' })).toEqual({
      ok: true,
      value: 'ok',
    });
  });
});
