import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listenLocal } from '../../../packages/channels/test/fake-server.js';
import { daemonPool, editConfigFile, openRaw, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-live-config-');
afterEach(() => pool.cleanup());

/** Polls `check` until it stops throwing (at most ~5 s). */
async function eventually<T>(check: () => Promise<T> | T): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await check();
    } catch (error) {
      if (attempt >= 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

const chain = (length: number) => ({
  nodes: Array.from({ length }, (_, index) => ({
    id: `n${index}`,
    prompt: `step ${index}`,
    ...(index > 0 ? { dependsOn: [`n${index - 1}`] } : {}),
  })),
});

describe('config applied live', () => {
  it('browser: a patched allowPrivateNetwork lets the running browser reach a private address', async () => {
    const site = await listenLocal((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<title>Intranet</title><h1>Hi</h1>');
    });
    try {
      const url = `${site.url}/`;
      const daemon = await pool.start(pool.tempDir());
      const rpc = rpcClient(daemon.url);
      await rpc.call('browser.start');
      expect((await rpc.fail('browser.navigate', { url })).message).toContain('loopback');
      const change = await rpc.call('config.patch', { browser: { allowPrivateNetwork: true } });
      expect(change).toMatchObject({ changedSections: ['browser'], restartRequired: [], applied: true });
      expect(await rpc.call('browser.navigate', { url })).toMatchObject({ title: 'Intranet', status: 200 });
    } finally {
      // The browser holds a keep-alive connection to the site until it stops: close drops it.
      await site.close();
    }
  });

  it('graph: a define over a patched node limit is refused, under it accepted', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    await rpc.call('graph.define', chain(3));
    const change = await rpc.call('config.patch', { graph: { maxNodes: 2, maxConcurrency: 2 } });
    expect(change).toMatchObject({ restartRequired: [], applied: true });
    const refused = await rpc.fail('graph.define', chain(3));
    expect(refused.code).toBe(-32602);
    const { graphId } = await rpc.call<{ graphId: string }>('graph.define', chain(2));
    expect((await rpc.fail('graph.execute', { graphId, concurrency: 3 })).code).toBe(-32602);
  });

  it('logging: a patched module level makes its debug lines appear in the log file', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    const logFile = join(daemon.dataDir, 'logs', 'agentd.log');
    const debugCalls = () =>
      readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((line) => line.includes('"msg":"rpc call"') && line.includes('"method":"system.ping"'));
    await rpc.call('system.ping');
    await daemon.logger.flush();
    expect(debugCalls()).toEqual([]);
    const change = await rpc.call('config.patch', { daemon: { logLevels: { gateway: 'debug' } } });
    expect(change).toMatchObject({ restartRequired: [], applied: true });
    await rpc.call('system.ping');
    await eventually(() => expect(debugCalls().length).toBeGreaterThan(0));
  });

  it('gateway: a new connection gets a patched message limit, an open one keeps its own', async () => {
    const daemon = await pool.start(pool.tempDir(), { config: { gateway: { wsHeartbeatMs: 0 } } });
    const rpc = rpcClient(daemon.url);
    const before = await openRaw(daemon.wsUrl);
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'system.ping',
      params: { pad: 'x'.repeat(3000) },
    });
    const change = await rpc.call('config.patch', { gateway: { wsMaxMessageBytes: 2048 } });
    expect(change).toMatchObject({ restartRequired: [], applied: true });
    const after = await openRaw(daemon.wsUrl);
    try {
      after.send(big);
      expect(await after.next()).toMatchObject({ error: { code: -32600 }, id: null });
      before.send(big);
      // The old socket is still open and keeps the limit it connected with: the message is
      // parsed and answered under its id (a size refusal would carry id null).
      expect(await before.next()).toMatchObject({ id: 1 });
    } finally {
      before.close();
      after.close();
    }
  });

  it('memory: a patched embedder is used for recall, old entries re-embedded in place', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    await rpc.call('memory.store', { content: 'the heron nests by the river' });
    const change = await rpc.call('config.patch', {
      memory: { embedder: { provider: 'hashing', dimensions: 64 }, autoRecall: { limit: 2 } },
    });
    expect(change).toMatchObject({ restartRequired: [], applied: true });
    await eventually(async () => {
      const stats = await rpc.call<{ missingEmbeddings: number; index: Record<string, unknown> }>(
        'memory.stats',
      );
      expect(stats.index).toMatchObject({ dimensions: 64, ready: true, size: 1 });
      expect(stats.missingEmbeddings).toBe(0);
    });
    const { results } = await rpc.call<{ results: Array<{ content: string }> }>('memory.search', {
      query: 'heron river',
    });
    expect(results[0]?.content).toBe('the heron nests by the river');
  });

  it('memory.enabled: off answers the documented -32000 and withdraws the tool, on works again', async () => {
    const daemon = await pool.start(pool.tempDir(), {
      config: { agents: { entries: { worker: { name: 'Worker', tools: ['memory_search'] } } } },
    });
    const rpc = rpcClient(daemon.url);
    await rpc.call('memory.store', { content: 'the heron nests by the river', agentId: 'worker' });
    const off = await rpc.call('config.patch', { memory: { enabled: false } });
    expect(off).toMatchObject({ restartRequired: [], applied: true });
    const refused = await rpc.fail('memory.search', { query: 'heron' });
    expect(refused).toMatchObject({
      code: -32000,
      message: 'Memory is disabled (memory.enabled is false in config.yaml)',
    });
    expect(daemon.memory).toBeUndefined();
    // The next turn has no memory tool: the call is refused as an unknown tool.
    const toolCall = { agentId: 'worker', message: '/tool memory_search {"query":"heron"}' };
    const offTurn = await rpc.call<{ response: string }>('session.send', { key: 'a:web:off', ...toolCall });
    expect(offTurn.response).not.toContain('memory_search returned');
    const on = await rpc.call('config.patch', { memory: { enabled: true } });
    expect(on).toMatchObject({ restartRequired: [], applied: true });
    const { results } = await rpc.call<{ results: Array<{ content: string }> }>('memory.search', {
      query: 'heron',
    });
    expect(results[0]?.content).toBe('the heron nests by the river');
    const onTurn = await rpc.call<{ response: string }>('session.send', { key: 'a:web:on', ...toolCall });
    expect(onTurn.response).toContain('memory_search returned');
  });

  it('memory.enabled: a daemon started without memory opens the store when it is switched on', async () => {
    const daemon = await pool.start(pool.tempDir(), { config: { memory: { enabled: false } } });
    const rpc = rpcClient(daemon.url);
    expect((await rpc.fail('memory.stats')).code).toBe(-32000);
    // The catalogue does not depend on the switch.
    const discovered = await rpc.call<{ methods: Array<{ name: string }> }>('rpc.discover');
    expect(discovered.methods.map((method) => method.name)).toContain('memory.search');
    const on = await rpc.call('config.patch', { memory: { enabled: true } });
    expect(on).toMatchObject({ restartRequired: [], applied: true });
    await rpc.call('memory.store', { content: 'kiwis sleep by day' });
    const { results } = await rpc.call<{ results: Array<{ content: string }> }>('memory.search', {
      query: 'kiwis',
    });
    expect(results.map((result) => result.content)).toEqual(['kiwis sleep by day']);
  });

  it('daemon.logging: a patched roll size rolls the log, a patched path moves it, no restart', async () => {
    const daemon = await pool.start(pool.tempDir(), {
      config: { daemon: { logLevels: { gateway: 'debug' } } },
    });
    const rpc = rpcClient(daemon.url);
    const logs = join(daemon.dataDir, 'logs');
    const change = await rpc.call('config.patch', { daemon: { logging: { maxSize: 2048, maxFiles: 2 } } });
    expect(change).toMatchObject({ changedSections: ['daemon'], restartRequired: [], applied: true });
    for (let call = 0; call < 20; call++) await rpc.call('system.ping');
    await daemon.logger.flush();
    expect(readdirSync(logs)).toEqual(expect.arrayContaining(['agentd.log.1.gz', 'agentd.log.2.gz']));
    expect(readdirSync(logs)).not.toContain('agentd.log.3.gz');
    const moved = await rpc.call('config.patch', {
      daemon: { logging: { filePath: 'other-logs/daemon.log' } },
    });
    expect(moved).toMatchObject({ restartRequired: [], applied: true });
    await rpc.call('system.ping');
    await daemon.logger.flush();
    const other = join(daemon.dataDir, 'other-logs');
    expect(readFileSync(join(other, 'daemon.log'), 'utf8')).toContain('"method":"system.ping"');
    // The config audit follows the log into its directory.
    await rpc.call('config.patch', { graph: { maxNodes: 3 } });
    expect(readFileSync(join(other, 'config-audit.jsonl'), 'utf8')).toContain('"sections":["graph"]');
  });

  it('observability.logRotation: the evidence and cache-trace files roll by a patched policy', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    const change = await rpc.call('config.patch', {
      observability: { logRotation: { maxSizeBytes: 700, maxFiles: 1, compressAged: false } },
    });
    expect(change).toMatchObject({ changedSections: ['observability'], restartRequired: [], applied: true });
    for (let turn = 0; turn < 6; turn++) {
      await rpc.call('session.send', { key: 'a:web:rolls', message: `turn ${turn}` });
    }
    await eventually(() => {
      const index = readdirSync(join(daemon.dataDir, 'obs', 'session-index'));
      expect(index.filter((name) => /\.1$/.test(name))).toHaveLength(1);
      expect(index.filter((name) => /\.2(\.gz)?$/.test(name))).toEqual([]);
      const logs = readdirSync(join(daemon.dataDir, 'logs'));
      expect(logs).toContain('cache-trace.jsonl.1');
      expect(logs).not.toContain('cache-trace.jsonl.2');
    });
  });

  it('cron: a patched default time zone applies to the next job', async () => {
    // Learning's daemon-wide `Memory lifecycle` job would be listed beside the one added here.
    const daemon = await pool.start(pool.tempDir(), { config: { learning: { enabled: false } } });
    const rpc = rpcClient(daemon.url);
    const change = await rpc.call('config.patch', {
      cron: { defaultTimeZone: 'Asia/Tokyo', maxConcurrentRuns: 2 },
    });
    expect(change).toMatchObject({ restartRequired: [], applied: true });
    await rpc.call('cron.add', {
      name: 'digest',
      message: 'summarise the day',
      schedule: { kind: 'cron', expr: '0 18 * * *' },
    });
    const { jobs } = await rpc.call<{ jobs: Array<Record<string, unknown>> }>('cron.list');
    expect(jobs).toEqual([expect.objectContaining({ name: 'digest', tz: 'Asia/Tokyo' })]);
    // The heartbeat section, coalescing window included, applies in place as well.
    const beat = await rpc.call('config.patch', { heartbeat: { coalesceWindowMs: 0, intervalMs: 60_000 } });
    expect(beat).toMatchObject({ restartRequired: [], applied: true });
    expect(await rpc.call('heartbeat.status')).toMatchObject({ intervalMs: 60_000 });
  });

  it('SIGHUP reload: a hand edit reaches its service through the same apply path', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    await rpc.call('graph.define', chain(3));
    editConfigFile(daemon.dataDir, (onDisk) => ({ ...onDisk, graph: { maxNodes: 2 } }));
    await daemon.reload();
    expect((await rpc.fail('graph.define', chain(3))).code).toBe(-32602);
  });
});
