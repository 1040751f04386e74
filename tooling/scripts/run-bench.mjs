#!/usr/bin/env node
// Runs every benchmark (packages/*/bench/run.ts, apps/*/bench/run.ts, and bench/run-<part>.ts
// beside them, named <package>-<part>) one after the other, so they never compete for the two
// cores. Pass a name fragment to run only matching ones (`cluster` runs daemon-cluster).
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
    const bench = join(root, group, name, 'bench');
    if (!existsSync(bench)) continue;
    // bench/run.ts is the package's benchmark; bench/run-<part>.ts another, named <name>-<part>.
    for (const file of readdirSync(bench).sort()) {
      const part = /^run(?:-([a-z0-9-]+))?\.ts$/.exec(file);
      if (!part) continue;
      const label = part[1] ? `${name}-${part[1]}` : name;
      if (filter && !label.includes(filter)) continue;
      console.log(`\n== ${group}/${label} ==`);
      const run = spawnSync(tsx, [join(bench, file), ...flags], {
        cwd: join(root, group, name),
        stdio: 'inherit',
      });
      if (run.status !== 0) failed.push(`${group}/${label}`);
    }
  }
}
if (failed.length > 0) {
  const why = flags.includes('--check') ? 'missed an aim or failed' : 'failed';
  console.log(`\nbench: ${failed.join(', ')} ${why}`);
}
process.exit(failed.length > 0 ? 1 : 0);
