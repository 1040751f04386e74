import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '@agentd/storage';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../src/index.js';

const here = dirname(fileURLToPath(import.meta.url));

describe('createMemoryStore', () => {
  it('keeps every committed batch and no partial one after the writer is killed mid-batch', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memory-crash-'));
    try {
      const url = `file:${join(dir, 'memory.db')}`;
      const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'crash-child.ts'), url], {
        cwd: join(here, '..'),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const committed: string[] = [];
      let buffer = '';
      let stderr = '';
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
      });
      await new Promise<void>((resolve, reject) => {
        child.on('exit', () => resolve());
        child.on('error', reject);
        child.stdout.on('data', (chunk) => {
          buffer += chunk;
          const lines = buffer.split('\n');
          buffer = lines.pop() ?? '';
          for (const line of lines) committed.push(...(JSON.parse(line) as string[]));
          // Kill while the next batch is being written.
          if (committed.length >= 500 && child.exitCode === null) child.kill('SIGKILL');
        });
        setTimeout(() => reject(new Error(`child produced too little: ${stderr}`)), 60_000).unref();
      });
      expect(committed.length).toBeGreaterThanOrEqual(500);

      const db = await openDatabase({ url });
      const store = await createMemoryStore({ database: db });
      await store.ready();
      const stats = await store.stats();
      // Whole batches only: the killed batch is entirely absent.
      expect(stats.entries % 50).toBe(0);
      expect(stats.entries).toBeGreaterThanOrEqual(committed.length);
      const exported = await store.export();
      const present = new Set(exported.entries.map((entry) => entry.id));
      for (const id of committed) expect(present.has(id)).toBe(true);
      // Full-text rows and the rebuilt index agree with the entries.
      expect(stats.index.size).toBe(stats.entries);
      const { recall } = await store.search({ query: 'zebra', limit: 5 });
      expect(recall.ftsCandidates).toBe(Math.min(50, stats.entries));
      await store.close();
      await db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
