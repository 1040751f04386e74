import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Database, openDatabase } from '@agentd/storage';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memorySectionSchema } from './options.js';
import { createEmbedderFromConfig, createMemoryService } from './service.js';

let dir: string;
let db: Database;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'memory-service-'));
  db = await openDatabase({ url: `file:${join(dir, 'memory.db')}` });
});

afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('createEmbedderFromConfig', () => {
  it('builds the embedder each provider names, with the configured dimensions', () => {
    const section = (embedder: Record<string, unknown>) => memorySectionSchema.parse({ embedder }).embedder;
    const hashing = createEmbedderFromConfig(section({ provider: 'hashing', dimensions: 64 }));
    expect([hashing.kind, hashing.dimensions]).toEqual(['lexical', 64]);
    const openai = createEmbedderFromConfig(
      section({ provider: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'embed-small', dimensions: 8 }),
    );
    expect([openai.kind, openai.model, openai.dimensions]).toEqual([
      'semantic',
      'openai-compatible:embed-small',
      8,
    ]);
    const local = createEmbedderFromConfig(
      section({ provider: 'local', modelPath: join(dir, 'model'), dimensions: 16 }),
    );
    expect([local.kind, local.dimensions]).toEqual(['semantic', 16]);
  });
});

describe('createMemoryService', () => {
  it('opens the store of a section with its recall and the two agent tools, and closes it', async () => {
    const service = await createMemoryService({
      database: db,
      section: memorySectionSchema.parse({ embedder: { provider: 'hashing', dimensions: 32 } }),
    });
    expect(service.store.embedder.dimensions).toBe(32);
    expect(service.tools.map((tool) => tool.name)).toEqual(['memory_search', 'memory_store']);
    await service.store.store({ content: 'the deploy window is friday afternoon', agentId: 'ops' });
    const recalled = await service.autoRecall.recall({
      agentId: 'ops',
      sessionKey: 'default:rpc:ops-user',
      message: 'when is the deploy window',
    });
    expect(recalled.context).toContain('deploy window');
    await service.close();
  });

  it('resolves secrets at start and on applyConfig, and rebuilds the embedder a new section names', async () => {
    const resolved: string[] = [];
    const service = await createMemoryService({
      database: db,
      section: memorySectionSchema.parse({ embedder: { provider: 'hashing', dimensions: 32 } }),
      resolveSecrets: async (section) => {
        resolved.push(section.embedder.provider);
        return section;
      },
    });
    await service.applyConfig(
      memorySectionSchema.parse({ embedder: { provider: 'hashing', dimensions: 64 }, candidates: 20 }),
    );
    expect(resolved).toEqual(['hashing', 'hashing']);
    expect(service.store.embedder.dimensions).toBe(64);
    await service.close();
  });
});
