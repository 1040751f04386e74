import { describe, expect, it } from 'vitest';
import { measureFirstPage } from './bundle-budget.js';

describe('measureFirstPage', () => {
  it('counts the entry and its static imports, not the pages loaded later', () => {
    const code = (n: number) => 'x'.repeat(n);
    const report = measureFirstPage(
      {
        'index.js': {
          type: 'chunk',
          fileName: 'index.js',
          isEntry: true,
          imports: ['shared.js'],
          code: code(10),
        },
        'shared.js': { type: 'chunk', fileName: 'shared.js', imports: ['index.js'], code: code(20) },
        'fleet.js': { type: 'chunk', fileName: 'fleet.js', imports: ['shared.js'], code: code(5000) },
        'index.css': { type: 'asset', fileName: 'index.css' },
      },
      1000,
    );
    expect(report.chunks.map((c) => [c.file, c.firstPage])).toEqual([
      ['fleet.js', false],
      ['index.js', true],
      ['shared.js', true],
    ]);
    const first = report.chunks.filter((c) => c.firstPage).reduce((sum, c) => sum + c.gzipBytes, 0);
    expect(report.firstPageGzipBytes).toBe(first);
    expect(report.budgetBytes).toBe(1000);
  });
});
