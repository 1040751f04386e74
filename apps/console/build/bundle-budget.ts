import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Plugin } from 'vite';

/** One built chunk as the budget sees it. */
interface ChunkLike {
  type: 'chunk' | 'asset';
  fileName: string;
  isEntry?: boolean;
  imports?: string[];
  code?: string;
}

/** What {@link measureFirstPage} reports (also written to `dist/bundle-size.json`). */
export interface BundleReport {
  /** Gzipped bytes of the JavaScript the first page loads: the entry and its static imports. */
  firstPageGzipBytes: number;
  budgetBytes: number;
  /** Every JavaScript chunk with its gzipped size and whether the first page loads it. */
  chunks: Array<{ file: string; gzipBytes: number; firstPage: boolean }>;
}

/**
 * Measures the first page's JavaScript: the entry chunk plus every chunk it imports
 * statically, gzipped at level 9; pages loaded later (dynamic imports) are listed but not
 * counted.
 */
export function measureFirstPage(bundle: Record<string, ChunkLike>, budgetBytes: number): BundleReport {
  const chunks = Object.values(bundle).filter((item) => item.type === 'chunk');
  const byName = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
  const first = new Set<string>();
  const visit = (name: string): void => {
    if (first.has(name)) return;
    first.add(name);
    for (const imported of byName.get(name)?.imports ?? []) visit(imported);
  };
  for (const chunk of chunks) if (chunk.isEntry) visit(chunk.fileName);
  const sized = chunks
    .map((chunk) => ({
      file: chunk.fileName,
      gzipBytes: gzipSync(chunk.code ?? '', { level: 9 }).length,
      firstPage: first.has(chunk.fileName),
    }))
    .sort((a, b) => a.file.localeCompare(b.file));
  const firstPageGzipBytes = sized.filter((c) => c.firstPage).reduce((sum, c) => sum + c.gzipBytes, 0);
  return { firstPageGzipBytes, budgetBytes, chunks: sized };
}

/**
 * A Vite plugin that measures the first page's gzipped JavaScript after each build, writes
 * `bundle-size.json` beside the build, and fails the build when the budget is exceeded.
 */
export function bundleBudget(options: { budgetBytes: number }): Plugin {
  let outDir = 'dist';
  return {
    name: 'agentd-bundle-budget',
    apply: 'build',
    configResolved(config) {
      outDir = join(config.root, config.build.outDir);
    },
    writeBundle(_output, bundle) {
      const report = measureFirstPage(bundle as unknown as Record<string, ChunkLike>, options.budgetBytes);
      writeFileSync(join(outDir, 'bundle-size.json'), `${JSON.stringify(report, null, 2)}\n`);
      const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
      this.info(
        `first page: ${kb(report.firstPageGzipBytes)} of JavaScript gzipped (budget ${kb(options.budgetBytes)})`,
      );
      if (report.firstPageGzipBytes > options.budgetBytes)
        this.error(
          `the first page loads ${kb(report.firstPageGzipBytes)} of gzipped JavaScript, over the ` +
            `${kb(options.budgetBytes)} budget: move code behind a dynamic import or drop a dependency`,
        );
    },
  };
}
