import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startFakeAnthropic, startFakeOpenAi } from '../../../packages/agent-runtime/test/fake-providers.js';
import { ADMIN_TOKEN, daemonPool, openAiProviders, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-agents-');
afterEach(() => pool.cleanup());

type Json = Record<string, unknown>;

interface SseEvent {
  event: string;
  data: Json;
}

/** Reads a text/event-stream response into events (comments skipped). */
async function readSse(response: Response, stopAfter?: (event: SseEvent) => boolean): Promise<SseEvent[]> {
  const reader = response.body?.getReader();
  if (!reader) throw new Error('no body');
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let boundary = buffer.indexOf('\n\n');
    while (boundary !== -1) {
      const block = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary + 2);
      boundary = buffer.indexOf('\n\n');
      const lines = block.split('\n').filter((line) => !line.startsWith(':'));
      if (lines.length === 0) continue;
      const event = lines.find((line) => line.startsWith('event: '))?.slice(7) ?? 'message';
      const data = lines
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      const parsed = { event, data: JSON.parse(data) as Json };
      events.push(parsed);
      if (stopAfter?.(parsed)) {
        await reader.cancel();
        return events;
      }
    }
  }
  return events;
}

describe('agent and agents methods', () => {
  it('creates an agent over RPC, persists it in config.yaml and runs turns through the offline provider', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    expect(await rpc.call('agents.list')).toEqual({ agents: ['default'] });
    const created = await rpc.call('agents.create', {
      name: 'Helper',
      systemPrompt: 'Be kind.',
      maxSteps: 4,
    });
    expect(created).toMatchObject({ agentId: 'helper', name: 'Helper', provider: 'offline', maxSteps: 4 });
    const persisted = parse(readFileSync(join(daemon.dataDir, 'config.yaml'), 'utf8')) as {
      agents: { entries: Record<string, unknown> };
    };
    expect(persisted.agents.entries.helper).toEqual({
      name: 'Helper',
      systemPrompt: 'Be kind.',
      maxSteps: 4,
    });
    expect(await rpc.call('agents.list')).toEqual({ agents: ['default', 'helper'] });
    expect(await rpc.call('agents.get', { agentId: 'helper' })).toMatchObject({ systemPrompt: 'Be kind.' });

    const result = await rpc.call('agent.execute', {
      message: 'hi there',
      agentId: 'helper',
      sessionKey: { tenantId: 'acme', userId: 'u1', channelId: 'web' },
    });
    expect(result).toMatchObject({ finishReason: 'stop', sessionKey: 'acme:web:u1' });
    expect(result.response).toContain('[offline]');
    expect(result.tokensUsed).toEqual({
      input: expect.any(Number),
      output: expect.any(Number),
      total: expect.any(Number),
    });

    // Without a key the caller's own default session is used.
    const own = await rpc.call('agent.stream', { message: 'streamed?' });
    expect(own.sessionKey).toBe('default:rpc:admin');
    const log = readFileSync(join(daemon.dataDir, 'logs', 'agentd.log'), 'utf8');
    expect(log).toContain('agent.stream answered with a non-streaming result');

    // Evidence lands under obs/.
    expect(readdirSync(join(daemon.dataDir, 'obs', 'session-index'))).toHaveLength(1);
    expect(readdirSync(join(daemon.dataDir, 'obs', 'trajectories')).length).toBe(2);
  });

  it('updates only the given fields live, validates a dry run without persisting, and describes operation models', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    await rpc.call('agents.create', { name: 'Ops', systemPrompt: 'first' });
    const before = readFileSync(join(daemon.dataDir, 'config.yaml'), 'utf8');
    const dry = await rpc.call('agents.update', { agentId: 'ops', systemPrompt: 'second', dryRun: true });
    expect(dry).toMatchObject({
      agentId: 'ops',
      updated: false,
      dryRun: true,
      agent: { systemPrompt: 'second' },
    });
    expect(readFileSync(join(daemon.dataDir, 'config.yaml'), 'utf8')).toBe(before);
    const invalidDry = await rpc.fail('agents.update', { agentId: 'ops', maxSteps: -1, dryRun: true });
    expect(invalidDry.code).toBe(-32602);
    expect(invalidDry.message).toContain('maxSteps');

    expect(await rpc.call('agents.update', { agentId: 'ops', maxSteps: 2 })).toMatchObject({
      agentId: 'ops',
      updated: true,
      agent: { maxSteps: 2, systemPrompt: 'first' },
    });
    expect(await rpc.call('agents.get', { agentId: 'ops' })).toMatchObject({ maxSteps: 2 });
    expect(await rpc.call('agent.getOperationModels', { agentId: 'ops' })).toMatchObject({
      agentId: 'ops',
      primaryModel: 'offline',
      providerFamily: 'offline',
      operations: [
        { operationType: 'chat', source: 'default' },
        { operationType: 'compaction', source: 'default' },
      ],
    });
    expect(await rpc.call('agent.cacheStats', { agentId: 'ops' })).toMatchObject({ hits: 0, misses: 0 });
  });

  it('applies agent and provider changes made through config.patch without a restart', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    await rpc.call('config.patch', {
      providers: { entries: { tiny: { type: 'offline', models: ['tiny-1'], contextWindow: 4096 } } },
      agents: { entries: { patched: { name: 'Patched', provider: 'tiny' } } },
    });
    expect(await rpc.call('agents.list')).toEqual({ agents: ['default', 'patched'] });
    expect((await rpc.call<{ models: Json[] }>('models.list')).models.map((model) => model.id)).toContain(
      'tiny/tiny-1',
    );
    const status = await rpc.call('session.send', { key: 'p', message: 'hi', agentId: 'patched' });
    expect(status.finishReason).toBe('stop');
    expect(await rpc.call('session.status', { key: 'p' })).toMatchObject({
      provider: 'tiny',
      model: 'tiny-1',
      contextWindow: 4096,
    });
  });

  it('suspends, resumes and deletes agents with clear errors for new messages', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    await rpc.call('agents.create', { name: 'temp' });
    await rpc.call('session.send', { key: 'temp-session', message: 'hello', agentId: 'temp' });
    expect(await rpc.call('agents.suspend', { agentId: 'temp' })).toMatchObject({
      agentId: 'temp',
      suspended: true,
    });
    const refused = await rpc.fail('session.send', { key: 'temp-session', message: 'again' });
    expect(refused.code).toBe(-32010);
    expect(refused.message).toBe('Agent suspended: temp; it accepts no new messages until resumed');
    expect(await rpc.call('agents.resume', { agentId: 'temp' })).toEqual({ agentId: 'temp', resumed: true });
    expect((await rpc.call('session.send', { key: 'temp-session', message: 'again' })).finishReason).toBe(
      'stop',
    );

    expect(await rpc.call('agents.delete', { agentId: 'temp' })).toEqual({ agentId: 'temp', deleted: true });
    expect(readFileSync(join(daemon.dataDir, 'config.yaml'), 'utf8')).not.toContain('temp:');
    const orphan = await rpc.fail('session.send', { key: 'temp-session', message: 'still there?' });
    expect(orphan.code).toBe(-32010);
    expect(orphan.message).toContain('Agent deleted: temp');
    expect((await rpc.call('session.history', { key: 'temp-session' })).messages).toHaveLength(4);
  });

  it('answers bad params with -32602 naming the field and unknown agents and sessions with -32004', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    const noMessage = await rpc.fail('agent.execute', {});
    expect(noMessage.code).toBe(-32602);
    expect(noMessage.message).toContain('message');
    expect((noMessage.data as { issues: unknown[] }).issues.length).toBeGreaterThan(0);
    const badKey = await rpc.fail('agent.execute', { message: 'x', sessionKey: { tenantId: 't' } });
    expect(badKey.code).toBe(-32602);
    expect(badKey.message).toContain('sessionKey');
    expect((await rpc.fail('agents.create', {})).message).toContain('name');
    expect((await rpc.fail('agents.create', { name: 'x', provider: 'ghost' })).message).toContain('provider');
    await rpc.call('agents.create', { name: 'dup' });
    expect((await rpc.fail('agents.create', { name: 'dup' })).message).toContain('already exists');

    const unknownAgent = await rpc.fail('agent.execute', { message: 'x', agentId: 'ghost' });
    expect(unknownAgent.code).toBe(-32004);
    expect(unknownAgent.message).toBe('Agent not found: ghost');
    expect((await rpc.fail('agents.get', { agentId: 'ghost' })).code).toBe(-32004);
    expect((await rpc.fail('agents.update', { agentId: 'ghost', name: 'n' })).code).toBe(-32004);
    expect((await rpc.fail('agents.suspend', { agentId: 'ghost' })).code).toBe(-32004);
    expect((await rpc.fail('agent.getOperationModels', { agentId: 'ghost' })).code).toBe(-32004);

    for (const [method, params] of [
      ['session.status', { key: 'nope' }],
      ['session.history', { key: 'nope' }],
      ['session.delete', { session_key: 'nope' }],
      ['session.reset', { session_key: 'nope' }],
      ['session.export', { session_key: 'nope' }],
      ['session.compact', { key: 'nope' }],
    ] as const) {
      const error = await rpc.fail(method, params);
      expect(error.code, method).toBe(-32004);
      expect(error.message, method).toBe('Session not found: nope');
    }
    const withKey = await rpc.fail('session.delete', { key: 'nope' });
    expect(withKey.code).toBe(-32602);
    expect(withKey.message).toMatch(/session_key|key/);

    const rpcOnly = await rpc.call<{ token: string }>('tokens.create', { scopes: ['rpc'] });
    const limited = rpcClient(daemon.url, rpcOnly.token);
    expect((await limited.fail('agents.list')).message).toBe("Insufficient scope: requires 'admin'");
    expect((await limited.call('models.list')).providers).toBeDefined();
  });
});

describe('session methods', () => {
  it('serves status, history, list, send, search, export, compact, reset, reset_conversation and delete', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    for (const message of ['tell me about volcanoes', 'and glaciers', 'and deserts']) {
      await rpc.call('session.send', { key: 'geo:web:ann', message });
    }
    await rpc.call('session.send', { key: 'other', message: 'unrelated chatter' });
    const remembered = await rpc.call<{ id: string }>('memory.store', {
      content: 'ann likes volcanoes',
      agentId: 'default',
      sessionKey: 'geo:web:ann',
    });

    expect(await rpc.call('session.status', { key: 'geo:web:ann' })).toMatchObject({
      sessionKey: 'geo:web:ann',
      agentId: 'default',
      model: 'offline',
      stepsExecuted: 3,
      stepLimit: 8,
      messageCount: 6,
    });
    const history = await rpc.call('session.history', { key: 'geo:web:ann', limit: 2 });
    expect(history.messages).toEqual([
      expect.objectContaining({ seq: 5, role: 'user', content: 'and deserts' }),
      expect.objectContaining({ seq: 6, role: 'assistant' }),
    ]);
    const listed = await rpc.call<{ sessions: Json[] }>('session.list', { kind: 'main' });
    expect(listed.sessions.map((session) => session.sessionKey).sort()).toEqual(['geo:web:ann', 'other']);
    const hits = await rpc.call<Json[]>('session.search', { query: 'glaciers' });
    expect(hits).toEqual([
      {
        sessionKey: 'geo:web:ann',
        agentId: 'default',
        channelType: 'webchat',
        snippet: expect.stringContaining('[glaciers]'),
        score: expect.any(Number),
        timestamp: expect.any(Number),
      },
    ]);
    const exported = await rpc.call('session.export', { session_key: 'geo:web:ann' });
    expect(exported).toMatchObject({
      sessionKey: 'geo:web:ann',
      messageCount: 6,
      metadata: { agentId: 'default', channelType: 'webchat' },
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    });

    const compacted = await rpc.call('session.compact', { key: 'geo:web:ann' });
    expect(compacted).toMatchObject({ compacted: true, messagesSummarized: 2, keptMessages: 4 });
    expect((await rpc.call('session.history', { key: 'geo:web:ann' })).summary).toContain('volcanoes');

    expect(await rpc.call('session.reset', { session_key: 'geo:web:ann' })).toEqual({
      sessionKey: 'geo:web:ann',
      reset: true,
      previousMessageCount: 6,
    });
    await rpc.call('session.send', { key: 'geo:web:ann', message: 'fresh start' });
    expect(
      await rpc.call('session.reset_conversation', { session_key: 'geo:web:ann', memory: true }),
    ).toEqual({
      sessionKey: 'geo:web:ann',
      lcdRowsDeleted: 2,
      sessionMessagesCleared: 2,
      runtimeSessionDestroyed: true,
      memoriesDeleted: 1,
    });
    expect(
      await rpc.call('memory.inspect', { id: remembered.id }).catch((error: { code: number }) => error.code),
    ).toBe(-32004);
    const deleted = await rpc.call('session.delete', { session_key: 'other' });
    expect(deleted).toMatchObject({ sessionKey: 'other', deleted: true, transcript: { messageCount: 2 } });
    expect(
      (await rpc.call<{ sessions: Json[] }>('session.list')).sessions.map((row) => row.sessionKey),
    ).toEqual(['geo:web:ann']);
  });

  it('reports billing through obs.billing.*', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    const turn = await rpc.call<{ tokensUsed: { input: number; output: number; total: number } }>(
      'session.send',
      {
        key: 'bill',
        message: 'count me',
      },
    );
    const total = await rpc.call('obs.billing.total');
    expect(total).toEqual({
      totalCost: 0,
      totalTokens: turn.tokensUsed.total,
      callCount: 1,
      totalCacheSaved: 0,
    });
    expect(await rpc.call('obs.billing.byAgent', { agentId: 'default' })).toEqual(total);
    expect(await rpc.call('obs.billing.bySession', { sessionKey: 'bill' })).toEqual(total);
    expect((await rpc.call('obs.billing.total', { sinceMs: Date.now() + 3_600_000 })).callCount).toBe(0);
    expect(await rpc.call('obs.billing.byProvider')).toEqual({
      providers: [
        {
          provider: 'offline',
          inputTokens: turn.tokensUsed.input,
          outputTokens: turn.tokensUsed.output,
          estimatedCostUsd: 0,
        },
      ],
    });
    const hours = await rpc.call<Array<{ hour: number; tokens: number }>>('obs.billing.usage24h');
    expect(hours).toHaveLength(24);
    expect(hours.reduce((sum, hour) => sum + hour.tokens, 0)).toBe(turn.tokensUsed.total);
    expect((await rpc.fail('obs.billing.byAgent', {})).code).toBe(-32602);
  });
});

describe('real providers through the daemon', () => {
  it('runs turns through fake OpenAI-compatible and Anthropic servers with keys from secret references', async () => {
    const openAiKey = 'sk-openai-test-secret-value';
    const anthropicKey = 'sk-ant-test-secret-value';
    const openai = await startFakeOpenAi({
      apiKey: openAiKey,
      respond: () => ({ text: 'from openai', usage: { input: 30, output: 3, cacheRead: 10 } }),
    });
    const anthropic = await startFakeAnthropic({
      apiKey: anthropicKey,
      respond: () => ({ text: 'from claude', usage: { input: 20, output: 4, cacheRead: 5, cacheWrite: 7 } }),
    });
    pool.closeAfter(openai);
    pool.closeAfter(anthropic);
    const daemon = await pool.start(pool.tempDir(), {
      env: { OPENAI_KEY: openAiKey, ANTHROPIC_KEY: anthropicKey },
      config: {
        providers: {
          entries: {
            oai: {
              type: 'openai-compatible',
              baseUrl: openai.url,
              apiKey: '${secret:OPENAI_KEY}',
              models: ['gpt-fake'],
              capabilities: { capabilityClass: 'mid' },
              prices: { inputPerMillion: 2, outputPerMillion: 8 },
            },
            ant: {
              type: 'anthropic',
              baseUrl: anthropic.url,
              apiKey: '${secret:ANTHROPIC_KEY}',
              models: ['claude-fake'],
            },
          },
        },
        agents: {
          entries: { gpt: { name: 'GPT', provider: 'oai' }, claude: { name: 'Claude', provider: 'ant' } },
        },
      },
    });
    const rpc = rpcClient(daemon.url);
    const turns = [
      {
        agentId: 'gpt',
        sessionKey: 'oai-session',
        response: 'from openai',
        tokensUsed: { input: 30, output: 3, total: 33 },
      },
      {
        agentId: 'claude',
        sessionKey: 'ant-session',
        response: 'from claude',
        tokensUsed: { input: 32, output: 4 },
      },
    ];
    for (const { agentId, sessionKey, response, tokensUsed } of turns) {
      expect(await rpc.call('agent.execute', { message: 'hello', agentId, sessionKey })).toMatchObject({
        response,
        finishReason: 'stop',
        tokensUsed,
      });
    }

    const models = await rpc.call('models.list');
    const text = JSON.stringify(models);
    expect(text).not.toContain(openAiKey);
    expect(text).not.toContain('secret:');
    expect(models.models).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: 'oai/gpt-fake', capabilityClass: 'mid', contextWindow: 128_000 }),
        expect.objectContaining({ id: 'ant/claude-fake' }),
      ]),
    );
    expect(await rpc.call('agent.cacheStats')).toMatchObject({
      hits: 2,
      cacheReadTokens: 15,
      cacheWriteTokens: 7,
    });

    // A provider switch in a dry run probes the new provider with its key.
    expect(
      await rpc.call('agents.update', {
        agentId: 'gpt',
        provider: 'ant',
        model: 'claude-fake',
        dryRun: true,
      }),
    ).toMatchObject({
      dryRun: true,
      providerProbed: true,
    });
    expect(anthropic.requests.at(-1)?.path).toBe('/v1/models');
    expect((await rpc.call('agents.get', { agentId: 'gpt' })).provider).toBe('oai');

    // A refused key is a clear provider error that never carries the key.
    openai.failures.push({
      status: 401,
      body: { error: { message: `Incorrect API key provided: ${openAiKey}` } },
    });
    const refused = await rpc.fail('agent.execute', {
      message: 'again',
      agentId: 'gpt',
      sessionKey: 'oai-session',
    });
    expect(refused.code).toBe(-32011);
    expect(refused.message).toBe('Provider oai: credential refused (HTTP 401)');
    const log = readFileSync(join(daemon.dataDir, 'logs', 'agentd.log'), 'utf8');
    expect(log).toContain('agent turn failed');
    expect(log).not.toContain(openAiKey);
    expect(log).not.toContain(anthropicKey);
  });
});

describe('GET /api/chat/stream', () => {
  it('streams token deltas, then the turn result, authenticated by header or token query', async () => {
    const daemon = await pool.start(pool.tempDir());
    const response = await fetch(
      `${daemon.url}/api/chat/stream?message=${encodeURIComponent('stream please')}&sessionKey=sse-1`,
      {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = await readSse(response);
    expect(events[0]).toMatchObject({ event: 'start', data: { sessionKey: 'sse-1' } });
    const deltas = events.filter((event) => event.event === 'delta');
    expect(deltas.length).toBeGreaterThan(3);
    const done = events.at(-1);
    expect(done?.event).toBe('done');
    expect(deltas.map((event) => event.data.text).join('')).toBe(done?.data.response);
    expect(done?.data).toMatchObject({ finishReason: 'stop', sessionKey: 'sse-1' });

    const byQuery = await fetch(`${daemon.url}/api/chat/stream?message=hi&token=${ADMIN_TOKEN}`);
    const queried = await readSse(byQuery);
    expect(queried.at(-1)).toMatchObject({ event: 'done', data: { sessionKey: 'default:rpc:admin' } });
  });

  it('refuses missing tokens and bad queries before streaming, and reports turn failures as an error event', async () => {
    const daemon = await pool.start(pool.tempDir());
    expect((await fetch(`${daemon.url}/api/chat/stream?message=hi`)).status).toBe(401);
    const bad = await fetch(`${daemon.url}/api/chat/stream?token=${ADMIN_TOKEN}`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: number; message: string } }).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('message'),
    });
    const failed = await fetch(`${daemon.url}/api/chat/stream?message=hi&agentId=ghost&token=${ADMIN_TOKEN}`);
    const events = await readSse(failed);
    expect(events.at(-1)).toEqual({
      event: 'error',
      data: { code: -32004, message: 'Agent not found: ghost', data: { kind: 'Agent', id: 'ghost' } },
    });
  });

  it('cancels the turn when the client disconnects', async () => {
    const openai = await startFakeOpenAi({
      apiKey: 'k',
      respond: () => ({ text: 'x'.repeat(2000), chunkDelayMs: 15 }),
    });
    pool.closeAfter(openai);
    const daemon = await pool.start(pool.tempDir(), {
      env: { K: 'k' },
      config: {
        providers: openAiProviders('slow', openai.url, 'K', ['m']),
        agents: { entries: { slow: { name: 'Slow', provider: 'slow' } } },
      },
    });
    const controller = new AbortController();
    const response = await fetch(
      `${daemon.url}/api/chat/stream?message=go&agentId=slow&sessionKey=gone&token=${ADMIN_TOKEN}`,
      {
        signal: controller.signal,
      },
    );
    await readSse(response, (event) => event.event === 'delta').catch(() => []);
    controller.abort();
    await openai.aborted;
    const rpc = rpcClient(daemon.url);
    const indexDir = join(daemon.dataDir, 'obs', 'session-index');
    let index = '';
    for (let attempt = 0; attempt < 100 && !index.includes('endReason'); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (!existsSync(indexDir)) continue;
      const [file] = readdirSync(indexDir, { withFileTypes: true }).filter((entry) => entry.isFile());
      if (file) index = readFileSync(join(indexDir, file.name), 'utf8');
    }
    expect(index).toContain('"endReason":"cancelled"');
    const history = await rpc.call<{ messages: Array<{ content: string }> }>('session.history', {
      key: 'gone',
    });
    expect(history.messages[1]?.content.length).toBeLessThan(2000);
  });
});
