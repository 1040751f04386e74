import { afterEach, describe, expect, it } from 'vitest';
import { daemonPool, openRaw, postRpc, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-hostile-keys-');
afterEach(() => pool.cleanup());

const BUILT_INS = ['toString', 'valueOf', 'hasOwnProperty', 'constructor', 'isPrototypeOf', '__proto__'];

/** A request body whose params text is given as is (JSON.stringify cannot write an own __proto__ key or 100,000 levels). */
function request(method: string, paramsText: string, id = 1): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${paramsText}}`;
}

describe('hostile keys and ids (issue #23)', () => {
  it('refuses a __proto__ agent entry in config.patch and keeps every agent', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    await rpc.call('agents.create', { name: 'alpha' });
    const refused = await postRpc(
      daemon.url,
      request('config.patch', '{"agents":{"entries":{"__proto__":{"name":"pp"}}}}'),
    );
    expect(refused.body).toMatchObject({
      error: { code: -32602, message: expect.stringContaining('params.agents.entries.__proto__') },
    });
    await rpc.call('agents.create', { name: 'beta' });
    expect(await rpc.call('agents.list')).toEqual({ agents: ['alpha', 'beta', 'default'] });
  });

  it('finds no agent named after an object built-in and refuses one as a new id', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    const unknown = (await rpc.fail('agents.get', { agentId: 'ghost' })).code;
    for (const agentId of BUILT_INS) {
      for (const method of ['agents.get', 'agents.delete', 'agents.suspend']) {
        const body = await postRpc(daemon.url, request(method, JSON.stringify({ agentId })));
        // __proto__ and constructor are no valid agent ids; the others are simply not there.
        const expected = agentId === '__proto__' || agentId === 'constructor' ? -32602 : unknown;
        expect(body.body, `${method} ${agentId}`).toMatchObject({ error: { code: expected } });
      }
    }
    for (const agentId of ['constructor', 'prototype']) {
      expect((await rpc.fail('agents.create', { name: 'x', agentId })).code, agentId).toBe(-32602);
    }
    expect((await rpc.call<{ agents: unknown[] }>('agents.list')).agents).toHaveLength(1);
  });

  it('answers constructor and prototype keys in agents.create and agents.update with -32602, not -32603 (fuzz)', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    const cases: Array<[string, string, string]> = [
      ['agents.create', '{"name":" ","agentId":"A","prototype":{}}', 'prototype'],
      ['agents.create', '{"name":"b","constructor":1}', 'constructor'],
      ['agents.update', '{"agentId":"default","prototype":{}}', 'prototype'],
      ['agents.update', '{"agentId":"default","credentials":{"constructor":"x"}}', 'credentials.constructor'],
    ];
    for (const [method, paramsText, path] of cases) {
      const answer = await postRpc(daemon.url, request(method, paramsText));
      expect(answer.body, paramsText).toMatchObject({
        error: { code: -32602, message: expect.stringContaining(`${path}: the key`) },
      });
    }
    expect(await rpc.call('agents.list')).toEqual({ agents: ['default'] });
  });

  it('answers built-in names in tokens, log modules and trace queries with -32602, not -32603', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    for (const id of ['__proto__', 'constructor']) {
      expect((await rpc.fail('tokens.create', { scopes: ['rpc'], id })).code, id).toBe(-32602);
    }
    for (const module of ['__proto__', 'constructor']) {
      expect((await rpc.fail('daemon.setLogLevel', { module, level: 'debug' })).code, module).toBe(-32602);
    }
    for (const where of ['__proto__=1', 'constructor=x', 'toString=y']) {
      expect((await rpc.fail('obs.trace.search', { where })).code, where).toBe(-32602);
    }
  });

  it('answers params nested 100,000 levels deep with -32602 over HTTP and WebSocket, and keeps serving', async () => {
    const daemon = await pool.start(pool.tempDir());
    const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    const overHttp = await postRpc(daemon.url, request('memory.store', `{"content":"x","metadata":${deep}}`));
    expect(overHttp.body).toMatchObject({
      error: { code: -32602, message: expect.stringContaining('nested deeper than 64 levels') },
    });
    const socket = await openRaw(daemon.url.replace('http', 'ws') + '/ws');
    socket.send(request('config.set', `{"section":"daemon","key":"logLevels","value":${deep}}`, 2));
    expect(await socket.next()).toMatchObject({ id: 2, error: { code: -32602 } });
    socket.send(request('system.ping', '{}', 3));
    expect(await socket.next()).toMatchObject({ id: 3, result: { pong: true } });
    socket.close();
  });
});

describe('config writes that would lock admins out (found by the fuzz suite)', () => {
  it('refuses a patch, set, apply or rollback leaving no admin token with -32602, and the admin token keeps working', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    const attempts: Array<[string, Record<string, unknown>]> = [
      ['config.apply', {}],
      ['config.patch', { gateway: { tokens: [] } }],
      ['config.patch', { gateway: { tokens: null } }],
      ['config.patch', { gateway: null }],
      ['config.set', { section: 'gateway', key: 'tokens', value: [] }],
    ];
    for (const [method, params] of attempts) {
      const error = await rpc.fail(method, params);
      expect(error.code, `${method} ${JSON.stringify(params)}`).toBe(-32602);
      expect(error.message).toContain('gateway.tokens');
    }
    // The first commit predates the admin token: rolling back to it would drop the token.
    const { entries } = await rpc.call<{ entries: Array<{ sha: string }> }>('config.history', {});
    const first = entries.at(-1)?.sha;
    const rollback = await rpc.fail('config.rollback', { sha: first });
    expect([rollback.code, rollback.message]).toEqual([-32602, expect.stringContaining('gateway.tokens')]);
    expect(await rpc.call('system.ping')).toMatchObject({ pong: true });
    // A patch that leaves the tokens alone is unaffected.
    expect(await rpc.call('config.patch', { daemon: { logLevel: 'debug' } })).toMatchObject({ ok: true });
  });
});
