#!/usr/bin/env node
// Runs every benchmark (packages/*/bench/run.ts, apps/*/bench/run.ts) one after the other,
// so they never compete for the two cores. Pass a name fragment to run only matching ones.
// With --check, each benchmark exits 1 when a figure misses the aim written beside it, and
// this script exits 1 naming the benchmarks that missed (see tooling/bench/harness.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const filter = args.find((arg) => !arg.startsWith('--'));
const flags = args.filter((arg) => arg.startsWith('--'));
const tsx = join(root, 'node_modules', '.bin', 'tsx');
const failed = [];
for (const group of ['packages', 'apps']) {
  for (const name of readdirSync(join(root, group))) {
    const entry = join(root, group, name, 'bench', 'run.ts');
    if (!existsSync(entry) || (filter && !name.includes(filter))) continue;
    console.log(`\n== ${group}/${name} ==`);
    const run = spawnSync(tsx, [entry, ...flags], {
      cwd: join(root, group, name),
      stdio: 'inherit',
    });
    if (run.status !== 0) failed.push(`${group}/${name}`);
  }
}
if (failed.length > 0) {
  const why = flags.includes('--check') ? 'missed an aim or failed' : 'failed';
  console.log(`\nbench: ${failed.join(', ')} ${why}`);
}
process.exit(failed.length > 0 ? 1 : 0);
