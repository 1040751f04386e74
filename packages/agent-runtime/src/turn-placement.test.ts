import { describe, expect, it } from 'vitest';
import { startRuntime } from '../test/helpers.js';

describe('turn placement', () => {
  it("is asked for every turn with the agent that runs it (an existing session's own), and its refusal stops the turn before anything is recorded", async () => {
    const t = await startRuntime({
      agents: { entries: { coder: { name: 'Coder' }, other: { name: 'Other' } } },
    });
    await t.runtime.runTurn({ agentId: 'coder', message: 'hi', sessionKey: 'default:rpc:coding' });
    const asked: Array<[string, string]> = [];
    const refusal = new Error('homed elsewhere');
    t.runtime.useTurnPlacement((agentId, origin) => {
      asked.push([agentId, origin]);
      if (agentId === 'coder') throw refusal;
    });
    // The request names no agent (or the default): the session's own agent is placed.
    await expect(t.runtime.runTurn({ message: 'by key', sessionKey: 'default:rpc:coding' })).rejects.toBe(
      refusal,
    );
    await expect(
      t.runtime.runTurn({
        agentId: 'coder',
        message: 'new',
        sessionKey: 'default:rpc:fresh',
        origin: 'hook',
      }),
    ).rejects.toBe(refusal);
    await t.runtime.runTurn({ agentId: 'other', message: 'fine', sessionKey: 'default:rpc:other' });
    expect(asked).toEqual([
      ['coder', 'rpc'],
      ['coder', 'hook'],
      ['other', 'rpc'],
    ]);
    // Refused turns wrote nothing: the session holds the first turn only, and no fresh session exists.
    const history = await t.runtime.sessions.history('default:rpc:coding');
    expect(history.messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'hi'],
      ['assistant', expect.any(String)],
    ]);
    await expect(t.runtime.sessions.history('default:rpc:fresh')).rejects.toThrow();
    t.runtime.useTurnPlacement(undefined);
    await t.runtime.runTurn({ message: 'unplaced', sessionKey: 'default:rpc:coding' });
    expect(asked).toHaveLength(3);
  });
});
