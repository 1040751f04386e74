#!/usr/bin/env node
// Runs the whole vitest suite (every package and app as one vitest project each)
// and closes with the one-line summary CI reads: `tests: N passed, N failed[, N skipped]`.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'agentd-tests-'));
const report = join(dir, 'report.json');
const vitestBin = join(
  dirname(createRequire(join(root, 'package.json')).resolve('vitest/package.json')),
  'vitest.mjs',
);

const child = spawn(
  process.execPath,
  [
    vitestBin,
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${report}`,
    ...process.argv.slice(2),
  ],
  { cwd: root, stdio: 'inherit' },
);

child.on('exit', (code, signal) => {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  if (existsSync(report)) {
    const data = JSON.parse(readFileSync(report, 'utf8'));
    passed = data.numPassedTests ?? 0;
    failed = data.numFailedTests ?? 0;
    skipped = (data.numPendingTests ?? 0) + (data.numTodoTests ?? 0);
    // A suite that failed to load has no tests counted; count it as one failure so it is never silent.
    const brokenSuites = (data.testResults ?? []).filter(
      (s) => s.status === 'failed' && (s.assertionResults ?? []).length === 0,
    ).length;
    failed += brokenSuites;
  } else {
    failed = 1;
  }
  rmSync(dir, { recursive: true, force: true });
  const exitCode = code ?? (signal ? 1 : 0);
  if (failed === 0 && exitCode !== 0) failed = 1;
  console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  process.exit(exitCode);
});
