#!/usr/bin/env node
// Runs the whole vitest suite (every package and app as one vitest project each)
// and closes with the one-line summary CI reads: `tests: N passed, N failed[, N skipped]`.
import { spawn, spawnSync } from 'node:child_process';
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

// A throwaway PostgreSQL for the cluster-mode suites (tooling/scripts/pg-test-server.sh). Its URL
// reaches the tests as AGENTD_TEST_PG_URL. When it cannot start, the suites skip with a printed
// reason, except under CI=true, where they fail (they see no URL and CI set).
const pgScript = join(root, 'tooling', 'scripts', 'pg-test-server.sh');
const env = { ...process.env };
let pgDir;
if (env.AGENTD_TEST_PG_URL === undefined) {
  const started = spawnSync('bash', [pgScript, 'start'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const found = (name) => new RegExp(`^${name}=(.*)$`, 'm').exec(started.stdout ?? '')?.[1];
  if (started.status === 0 && found('AGENTD_TEST_PG_URL') !== undefined) {
    pgDir = found('AGENTD_TEST_PG_DIR');
    env.AGENTD_TEST_PG_URL = found('AGENTD_TEST_PG_URL');
  } else {
    console.error(
      `PostgreSQL for the cluster-mode suites did not start (exit ${started.status}); ` +
        (env.CI === 'true' ? 'they will fail (CI=true)' : 'they will be skipped'),
    );
  }
}
const stopPg = () => {
  if (pgDir !== undefined) spawnSync('bash', [pgScript, 'stop', pgDir], { stdio: 'inherit' });
  pgDir = undefined;
};
process.on('SIGINT', () => {
  stopPg();
  process.exit(130);
});

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
  { cwd: root, stdio: 'inherit', env },
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
  stopPg();
  const exitCode = code ?? (signal ? 1 : 0);
  if (failed === 0 && exitCode !== 0) failed = 1;
  console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  process.exit(exitCode);
});
