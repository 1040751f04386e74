import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');
const unit = readFileSync(join(root, 'deploy', 'agentd.service'), 'utf8');
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const systemDeps = readFileSync(join(root, 'tooling', 'scripts', 'system-deps.sh'), 'utf8');
const hasSystemdAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;

/** `Key=value` lines of the unit's `[Service]` section. */
function serviceSettings(): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  const section = unit.slice(unit.indexOf('[Service]'), unit.indexOf('[Install]'));
  for (const line of section.split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (match?.[1] && match[2] !== undefined)
      settings.set(match[1], [...(settings.get(match[1]) ?? []), match[2]]);
  }
  return settings;
}

describe('deploy/agentd.service', () => {
  it.runIf(hasSystemdAnalyze)('passes systemd-analyze verify without a warning', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentd-unit-'));
    try {
      // verify checks that ExecStart's program exists: point it at this machine's node.
      const path = join(dir, 'agentd.service');
      writeFileSync(path, unit.replace(/^ExecStart=\S+/m, `ExecStart=${process.execPath}`));
      const result = spawnSync('systemd-analyze', ['verify', path], { encoding: 'utf8' });
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs node itself as a dedicated user, hardened, restarted on failure', () => {
    const settings = serviceSettings();
    const one = (key: string) => settings.get(key)?.at(-1);
    expect(one('User')).toBe('agentd');
    expect(one('NoNewPrivileges')).toBe('true');
    expect(one('ProtectSystem')).toBe('strict');
    expect(one('PrivateTmp')).toBe('true');
    expect(one('Restart')).toBe('on-failure');
    expect(one('UMask')).toBe('0077');
    // No shell or package manager in between, so SIGTERM reaches the daemon.
    expect(one('ExecStart')).toMatch(/^\/usr\/bin\/node --expose-gc \S+\/apps\/daemon\/dist\/cli\.js start /);
  });
});

describe('Dockerfile', () => {
  it('installs every Debian package the features use at run time', () => {
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    // Build tools (node-pty's compile) and the tests' own tools are not needed to run the daemon.
    const notAtRunTime = new Set(['python3', 'make', 'g++', 'openssl', 'curl', 'prometheus']);
    const needed = [...systemDeps.matchAll(/^need (\S+) /gm)]
      .map((match) => match[1] ?? '')
      .filter((name) => !notAtRunTime.has(name));
    expect(needed.length).toBeGreaterThan(10);
    for (const name of needed)
      expect(runtime).toMatch(new RegExp(`[ \\\\\\n]${name.replace('+', '\\+')}[ \\\\\\n]`));
  });

  it('runs node directly on the built CLI, as an unprivileged user, with data on a volume', () => {
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^VOLUME \/data$/m);
    const cmd = /^CMD (\[.*\])$/m.exec(runtime)?.[1];
    expect(JSON.parse(cmd ?? '[]')).toEqual([
      'node',
      '--expose-gc',
      'apps/daemon/dist/cli.js',
      'start',
      '--data-dir',
      '/data',
      '--host',
      '0.0.0.0',
    ]);
  });
});
