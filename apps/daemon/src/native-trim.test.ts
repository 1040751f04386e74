import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadNativeTrim } from './native-trim.js';

const MB = 2 ** 20;

describe('loadNativeTrim', () => {
  it.runIf(process.platform === 'linux')(
    'hands free pages inside the C heap back to the system, which freeing alone does not',
    () => {
      // A child process, so the figures are its own: 64 KB buffers come from glibc's arena (below
      // its mmap threshold); keeping every tenth pins the arena, so the 90 % freed stay resident.
      const script = `
        import { loadNativeTrim } from ${JSON.stringify(join(import.meta.dirname, 'native-trim.ts'))};
        const trim = loadNativeTrim();
        let all = Array.from({ length: 3000 }, () => Buffer.alloc(64 * 1024, 1));
        const kept = all.filter((_, i) => i % 10 === 0);
        all = null;
        gc();
        await new Promise((resolve) => setTimeout(resolve, 300));
        const freed = process.memoryUsage().rss;
        trim();
        const trimmed = process.memoryUsage().rss;
        console.log(JSON.stringify({ freed, trimmed, kept: kept.length, loaded: typeof trim }));
      `;
      const out = execFileSync(
        process.execPath,
        ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script],
        { encoding: 'utf8' },
      );
      const { freed, trimmed, kept, loaded } = JSON.parse(out) as Record<string, number | string>;
      expect(loaded).toBe('function');
      expect(kept).toBe(300);
      // 2,700 freed buffers are ~169 MB; most of it must leave the resident set.
      expect(Number(freed) - Number(trimmed)).toBeGreaterThan(100 * MB);
    },
  );

  it('answers a function that can be called at any time (or undefined off Linux)', () => {
    const trim = loadNativeTrim();
    if (process.platform !== 'linux') return expect(trim).toBeUndefined();
    expect(trim).toBeTypeOf('function');
    expect(() => trim!()).not.toThrow();
  });
});
