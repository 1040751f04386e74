import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const daemonDir = join(import.meta.dirname, '..');
const root = join(daemonDir, '..', '..');
const bundle = join(daemonDir, 'dist', 'cli.js');

/**
 * Vitest global setup: the tests that start `agentd` as a real process run the bundle users run
 * (`dist/cli.js`, as `./agentd start`, the systemd unit and the Dockerfile do), not the sources
 * under a TypeScript loader, which costs seconds per start. The bundle is rebuilt first whenever
 * a source it is made of is newer than it, so a test never runs stale code.
 */
export default function setup(): void {
  if (existsSync(bundle) && newestSource() <= statSync(bundle).mtimeMs) return;
  const tsup = join(root, 'node_modules', '.bin', 'tsup');
  const built = spawnSync(tsup, ['--silent'], { cwd: daemonDir, stdio: 'inherit' });
  if (built.status !== 0) throw new Error(`building the daemon bundle failed (exit ${built.status})`);
}

/** The newest modification time of what the bundle is made of: every workspace package's src. */
function newestSource(): number {
  let newest = 0;
  const visit = (path: string) => {
    const stat = statSync(path);
    if (stat.isDirectory()) {
      for (const entry of readdirSync(path)) visit(join(path, entry));
    } else if (stat.mtimeMs > newest) newest = stat.mtimeMs;
  };
  const sourceDirs = [
    join(daemonDir, 'src'),
    ...readdirSync(join(root, 'packages')).map((name) => join(root, 'packages', name, 'src')),
  ];
  for (const dir of sourceDirs) if (existsSync(dir)) visit(dir);
  for (const file of [join(daemonDir, 'package.json'), join(daemonDir, 'tsup.config.ts')]) visit(file);
  return newest;
}
