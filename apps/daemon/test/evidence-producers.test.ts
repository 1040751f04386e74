import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { CACHE_TRACE_FILE, cacheTraceRecordSchema, OFFLOAD_DIR } from '@agentd/evidence';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonPool, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-evidence-');
afterEach(() => pool.cleanup());

type Json = Record<string, unknown>;

interface Explained {
  breakerTimeline: Array<{ seq: number; event: string; toolName: string }>;
  offloads: Array<{ diskPathRel: string; bytes: number; resolved: boolean }>;
  failures: Array<{ seq: number; toolName: string; errorKind: string }>;
  toolStats: Record<string, { ok: number; failed: number; topErrorKind: string | null }>;
  coverage?: { offloads: { pointersResolved: number; pointersTotal: number } };
}

const config = (extra: Json = {}) => ({
  // A wide offline model, so a truncated large result still fits the next model call.
  providers: { entries: { wide: { type: 'offline', models: ['wide'], contextWindow: 200_000 } } },
  agents: {
    entries: {
      worker: {
        name: 'Worker',
        provider: 'wide',
        tools: ['graph_execute', 'memory_search'],
        toolBreaker: { failureThreshold: 2, cooldownMs: 600_000 },
      },
    },
  },
  ...extra,
});

function cacheTraceLines(file: string) {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => cacheTraceRecordSchema.parse(JSON.parse(line)));
}

describe('evidence producers in the daemon', () => {
  it('shows the breaker of a repeatedly failing tool in obs.explain and counts the trip in the fleet report', async () => {
    const daemon = await pool.start(pool.tempDir(), { config: config() });
    const { call } = rpcClient(daemon.url);
    const key = 'acme:web:breaker';
    const send = () =>
      call<{ traceId?: string; response: string }>('session.send', {
        key,
        agentId: 'worker',
        message: '/tool graph_execute {"graphId":"no-such-graph"}',
      });
    await send();
    await send();
    const refused = await send();
    expect(refused.response).toContain('unavailable for now');

    const report = await call<Explained>('obs.explain', { sessionKey: key });
    expect(report.breakerTimeline).toEqual([{ seq: 2, event: 'opened', toolName: 'graph_execute' }]);
    expect(report.failures.map((failure) => [failure.seq, failure.errorKind])).toEqual([
      [3, 'breaker_open'],
      [2, 'tool_error'],
      [1, 'tool_error'],
    ]);
    expect(report.toolStats.graph_execute).toMatchObject({ ok: 0, failed: 3 });

    const fleet = await call<{ breakerTripTotal: number }>('obs.fleet.health', {});
    expect(fleet.breakerTripTotal).toBe(1);
  });

  it('shows the offloaded large tool result in obs.explain, with the whole result on disk', async () => {
    const daemon = await pool.start(pool.tempDir(), { config: config() });
    const { call } = rpcClient(daemon.url);
    const body = (word: string) => `zebra ${word} ${'lorem ipsum dolor '.repeat(3500)}`;
    await call('memory.store', { content: body('first'), agentId: 'worker' });
    await call('memory.store', { content: body('second'), agentId: 'worker' });
    // A long key: the pointer must still pass the evidence store's 128-character id limit.
    const key = `acme:web:offload-${'o'.repeat(200)}`;
    const answer = await call<{ response: string }>('session.send', {
      key,
      agentId: 'worker',
      message: '/tool memory_search {"query":"zebra","limit":5}',
    });
    expect(answer.response).toContain('memory_search returned');

    const report = await call<Explained>('obs.explain', { sessionKey: key });
    expect(report.offloads).toHaveLength(1);
    const [offload] = report.offloads;
    expect(offload?.resolved).toBe(true);
    expect(offload?.diskPathRel.startsWith(`${OFFLOAD_DIR}/`)).toBe(true);
    expect(offload?.bytes).toBeGreaterThan(100_000);
    expect(report.coverage?.offloads).toEqual({ pointersResolved: 1, pointersTotal: 1 });

    const stored = readFileSync(join(daemon.dataDir, offload?.diskPathRel ?? ''), 'utf8');
    expect(Buffer.byteLength(stored)).toBe(offload?.bytes);
    const parsed = JSON.parse(stored) as { results: Array<{ content: string }> };
    expect(parsed.results.map((result) => result.content).sort()).toEqual([body('first'), body('second')]);

    // The model saw the pointer, and the transcript keeps only the cut result.
    const history = await call<{ messages: Array<{ role: string; content: string }> }>('session.history', {
      key,
    });
    const toolMessage = history.messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content).toContain(offload?.diskPathRel);
    expect(toolMessage?.content.length).toBeLessThan(stored.length);

    // Once the file is gone (the start-up sweep deletes aged offloads), the pointer no longer resolves.
    rmSync(join(daemon.dataDir, offload?.diskPathRel ?? ''));
    const after = await call<Explained>('obs.explain', { sessionKey: key });
    expect(after.offloads[0]?.resolved).toBe(false);
    expect(after.coverage?.offloads).toEqual({ pointersResolved: 0, pointersTotal: 1 });
  });

  it('writes one cache-trace line per model call to logs/cache-trace.jsonl, without message text', async () => {
    const daemon = await pool.start(pool.tempDir(), { config: config() });
    const { call } = rpcClient(daemon.url);
    await call('session.send', { key: 'acme:web:trace', message: 'a private remark about kiwis' });
    await call('session.send', {
      key: 'acme:web:trace-tools',
      agentId: 'worker',
      message: '/tool memory_search {"query":"kiwis"}',
    });
    const file = join(daemon.dataDir, 'logs', CACHE_TRACE_FILE);
    const lines = cacheTraceLines(file);
    expect(lines.map((line) => [line.sessionKey, line.agentId, line.provider, line.step])).toEqual([
      ['acme:web:trace', 'default', 'offline', 1],
      ['acme:web:trace-tools', 'worker', 'wide', 1],
      ['acme:web:trace-tools', 'worker', 'wide', 2],
    ]);
    expect(lines.every((line) => line.inputTokens > 0 && line.hit === false)).toBe(true);
    expect(readFileSync(file, 'utf8')).not.toContain('kiwis');
  });

  it('rolls the cache trace at daemon.logging.tracing.maxSize into gzipped copies', async () => {
    const dataDir = pool.tempDir();
    const daemon = await pool.start(dataDir, {
      config: config({
        daemon: { logging: { tracing: { outputDir: 'traces', maxSize: '1k', maxFiles: 2 } } },
      }),
    });
    const { call } = rpcClient(daemon.url);
    for (let turn = 0; turn < 12; turn++) {
      await call('session.send', { key: `acme:web:roll-${turn}`, message: 'hello' });
    }
    // Stopping closes the stream after its rotations finish.
    await daemon.stop();
    const live = join(dataDir, 'traces', CACHE_TRACE_FILE);
    expect(existsSync(`${live}.1.gz`)).toBe(true);
    expect(existsSync(`${live}.3.gz`)).toBe(false);
    const rolled = gunzipSync(readFileSync(`${live}.1.gz`))
      .toString('utf8')
      .trim()
      .split('\n');
    expect(rolled.length).toBeGreaterThan(0);
    for (const line of rolled) cacheTraceRecordSchema.parse(JSON.parse(line));
    expect(existsSync(join(dataDir, 'logs', CACHE_TRACE_FILE))).toBe(false);
  });
});
