#!/usr/bin/env node
// Runs every benchmark (packages/*/bench/run.ts, apps/*/bench/run.ts) one after the other,
// so they never compete for the two cores. Pass a name fragment to run only matching ones.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const filter = process.argv[2];
const tsx = join(root, 'node_modules', '.bin', 'tsx');
let failed = 0;
for (const group of ['packages', 'apps']) {
  for (const name of readdirSync(join(root, group))) {
    const entry = join(root, group, name, 'bench', 'run.ts');
    if (!existsSync(entry) || (filter && !name.includes(filter))) continue;
    console.log(`\n== ${group}/${name} ==`);
    const run = spawnSync(tsx, [entry, ...process.argv.slice(3)], {
      cwd: join(root, group, name),
      stdio: 'inherit',
    });
    if (run.status !== 0) failed++;
  }
}
process.exit(failed ? 1 : 0);
