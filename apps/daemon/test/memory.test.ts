import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SESSION_INDEX_DIR, type SessionIndexRecord, sessionIndexRecordSchema } from '@agentd/evidence';
import { createHttpClient } from '@agentd/client';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAi } from '../../../packages/agent-runtime/test/fake-providers.js';
import { listenLocal } from '../../../packages/channels/test/fake-server.js';
import { ADMIN_TOKEN, daemonPool, openAiProviders, rpcFailure } from './helpers.js';

const pool = daemonPool('agentd-memory-');
afterEach(() => pool.cleanup());

describe('memory methods', () => {
  it('stores, searches, inspects, browses, exports, deletes and flushes over the gateway', async () => {
    const daemon = await pool.start(pool.tempDir());
    const admin = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
    const first = await admin.call('memory.store', {
      content: 'the user prefers window seats on flights',
      agentId: 'travel',
      sessionKey: 'default:rpc:alice',
      tags: ['preferences'],
    });
    expect(first.id).toMatch(/^mem_/);
    await admin.call('memory.store', { content: 'the user is vegetarian', agentId: 'travel' });
    await admin.call('memory.store', {
      content: 'flights to Oslo are cheapest on Tuesdays',
      agentId: 'other',
    });

    const search = await admin.call('memory.search', { query: 'window seat flights', agentId: 'travel' });
    expect(search.results[0]).toEqual({
      id: first.id,
      content: 'the user prefers window seats on flights',
      score: expect.any(Number),
      timestamp: expect.any(Number),
    });
    const scores = search.results.map((result: { score: number }) => result.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);

    const detail = await admin.call('memory.inspect', { id: first.id });
    expect(detail).toMatchObject({
      agentId: 'travel',
      sessionKey: 'default:rpc:alice',
      tags: ['preferences'],
    });
    const overall = await admin.call('memory.inspect', {});
    expect(overall).toMatchObject({ entries: 3, agents: 2, index: { kind: 'quantized', ready: true } });

    const page = await admin.call('memory.browse', { limit: 2 });
    expect(page).toMatchObject({ total: 3, offset: 0, limit: 2 });
    expect(page.entries).toHaveLength(2);
    expect(await admin.call('memory.export', { agentId: 'travel' })).toMatchObject({ count: 2 });
    const cache = await admin.call('memory.embeddingCache', {});
    expect(cache).toMatchObject({ misses: expect.any(Number), hits: expect.any(Number), evictions: 0 });
    expect((await admin.call('memory.stats', {})).bytes.database).toBeGreaterThan(0);

    expect(await admin.call('memory.delete', { id: first.id })).toMatchObject({
      id: first.id,
      deleted: true,
    });
    const missing = await rpcFailure(admin.call('memory.delete', { id: first.id }));
    expect(missing.code).toBe(-32004);
    expect(missing.message).toBe(`Memory entry not found: ${first.id}`);
    expect(await admin.call('memory.flush', { agentId: 'other' })).toEqual({ flushed: 1 });
    expect(await admin.call('memory.flush', {})).toEqual({ flushed: 1 });
  });

  it('lets an rpc token search and inspect but not manage memory, and names bad fields', async () => {
    const daemon = await pool.start(pool.tempDir());
    const admin = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
    const { token } = await admin.call('tokens.create', { scopes: ['rpc'], id: 'app' });
    const app = createHttpClient({ url: daemon.url, token });
    expect(await app.call('memory.search', { query: 'anything' })).toEqual({ results: [] });
    expect(await app.call('memory.inspect', {})).toMatchObject({ entries: 0 });
    for (const method of ['memory.store', 'memory.browse', 'memory.flush', 'memory.export', 'memory.stats']) {
      expect((await rpcFailure(app.call(method, { content: 'x' }))).code).toBe(-32603);
    }
    const invalid = await rpcFailure(admin.call('memory.search', { query: 'x', limit: 0 }));
    expect(invalid.code).toBe(-32602);
    expect(invalid.message).toContain('limit');
    expect((await rpcFailure(admin.call('memory.store', { content: '' }))).message).toContain('content');
  });
});

describe('memory with a remote embedder', () => {
  it('embeds through the configured /v1/embeddings endpoint and recalls full-text only when it goes down', async () => {
    const keys: Array<string | undefined> = [];
    const embedder = await listenLocal((req, res) => {
      let raw = '';
      req.on('data', (chunk) => {
        raw += chunk;
      });
      req.on('end', () => {
        keys.push(req.headers.authorization);
        const input = (JSON.parse(raw) as { input: string[] }).input;
        const data = input.map((text, index) => ({
          index,
          embedding: Array.from({ length: 8 }, (_, d) =>
            text.includes('seat') ? (d === 0 ? 1 : 0) : d === 1 ? 1 : 0,
          ),
        }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
      });
    });
    // The test stops the embedder half-way; the pool closes it if it still listens.
    pool.closeAfter({ close: () => (embedder.server.listening ? embedder.close() : undefined) });
    const events: Array<[string, Record<string, unknown>]> = [];
    const daemon = await pool.start(pool.tempDir(), {
      config: {
        memory: {
          embedder: {
            provider: 'openai',
            baseUrl: `${embedder.url}/v1`,
            model: 'fake-embed',
            dimensions: 8,
            apiKey: '${secret:EMBED_KEY}',
            timeoutMs: 2000,
          },
        },
      },
      env: { EMBED_KEY: 'sk-embed-secret' },
      events: { emit: (name, payload) => events.push([name, payload]) },
    });
    const admin = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
    const stored = await admin.call('memory.store', { content: 'aisle seat please' });
    const found = await admin.call('memory.search', { query: 'seat' });
    expect(found.results.map((result: { id: string }) => result.id)).toEqual([stored.id]);
    expect(keys.every((key) => key === 'Bearer sk-embed-secret')).toBe(true);
    expect(events.find(([name]) => name === 'memory:recalled')?.[1]).toMatchObject({
      lanes: ['fts', 'vector'],
    });

    await embedder.close();
    const degraded = await admin.call('memory.search', { query: 'aisle please' });
    expect(degraded.results.map((result: { id: string }) => result.id)).toEqual([stored.id]);
    expect(events.at(-1)).toEqual([
      'memory:recalled',
      expect.objectContaining({ vectorCandidates: 0, degraded: true }),
    ]);
  });
});

describe('automatic recall before a turn', () => {
  function sessionIndex(dataDir: string): SessionIndexRecord[] {
    const folder = join(dataDir, SESSION_INDEX_DIR);
    return readdirSync(folder).flatMap((file) =>
      readFileSync(join(folder, file), 'utf8')
        .trim()
        .split('\n')
        .map((line) => sessionIndexRecordSchema.parse(JSON.parse(line))),
    );
  }

  it('hands an agent with memory.autoRecall its stored memories and records the recall in evidence', async () => {
    const systems: string[] = [];
    const fake = pool.closeAfter(
      await startFakeOpenAi({
        apiKey: 'sk-chat-secret',
        respond: (body) => {
          const messages = body.messages as Array<{ role: string; content: string }>;
          const system = messages.find((message) => message.role === 'system')?.content ?? '';
          systems.push(system);
          return { text: system.includes('Pip') ? 'your kiwi is called Pip' : 'I do not know' };
        },
      }),
    );
    const daemon = await pool.start(pool.tempDir(), {
      env: { CHAT_KEY: 'sk-chat-secret' },
      config: {
        providers: openAiProviders('chat', fake.url, 'CHAT_KEY', ['m']),
      },
    });
    const admin = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
    await admin.call('agents.create', {
      agentId: 'keeper',
      name: 'Keeper',
      provider: 'chat',
      systemPrompt: 'Answer from memory.',
      memory: { autoRecall: true },
    });
    await admin.call('agents.create', { agentId: 'forgetful', name: 'Forgetful', provider: 'chat' });
    const keeperView = (await admin.call('agents.get', { agentId: 'keeper' })) as { memory: unknown };
    expect(keeperView.memory).toEqual({
      autoRecall: true,
      recallTimeoutMs: 2000,
    });
    await admin.call('memory.store', {
      content: 'the user keeps a pet kiwi bird named Pip',
      agentId: 'keeper',
    });
    await admin.call('memory.store', {
      content: 'the user keeps a pet kiwi bird named Pip',
      agentId: 'forgetful',
    });
    await admin.call('memory.store', { content: 'the office closes at six', agentId: 'other' });

    /** Asks an agent the same question in its own webchat session. */
    const askKiwi = async (agentId: string) =>
      (await admin.call('agent.execute', {
        agentId,
        message: 'what is the name of my kiwi bird?',
        sessionKey: `${agentId}:webchat:alice`,
      })) as { response: string };
    const answer = await askKiwi('keeper');
    expect(answer.response).toBe('your kiwi is called Pip');
    expect(systems[0]).toContain('Answer from memory.');
    expect(systems[0]).toContain('Relevant memories');
    expect(systems[0]).toContain('- the user keeps a pet kiwi bird named Pip');
    expect(systems[0]).not.toContain('office');

    const plain = await askKiwi('forgetful');
    expect(plain.response).toBe('I do not know');
    expect(systems[1]).not.toContain('Pip');

    const rows = sessionIndex(daemon.dataDir);
    const keeper = rows.find((row) => row.agentId === 'keeper');
    expect(keeper?.recall).toMatchObject({ ok: true, finalCount: 1, degraded: false });
    expect(keeper?.recall?.lanes).toContain('fts');
    expect(keeper?.recall?.injectedTokens).toBeGreaterThan(0);
    expect(rows.find((row) => row.agentId === 'forgetful')?.recall).toBeUndefined();
    // Evidence carries counts only, never the memory text.
    expect(JSON.stringify(rows)).not.toContain('Pip');
  });
});
