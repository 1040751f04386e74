#!/usr/bin/env node
// Starts the BUILT daemon (apps/daemon/dist/cli.js, what `pnpm start` runs) on a temp data dir,
// calls system.ping through the built CLI, checks that it serves the built console at `/`, and
// stops it with SIGTERM. The test suite runs the
// sources through tsx, so this is what proves the bundle itself starts.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = join(root, 'apps', 'daemon', 'dist', 'cli.js');
const dataDir = mkdtempSync(join(tmpdir(), 'agentd-smoke-'));
const token = 'smoke-admin-token-0123456789abcdef01234567';
const child = spawn(process.execPath, [cli, 'start', '--data-dir', dataDir, '--port', '0'], {
  env: { ...process.env, AGENTD_ADMIN_TOKEN: token },
  stdio: ['ignore', 'ignore', 'pipe'],
});
let stderr = '';
const fail = (message) => {
  console.error(`smoke: ${message}\n${stderr}`);
  child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(1);
};
let checking = false;
const timer = setTimeout(() => fail('the built daemon did not start within 60 s'), 60_000);
child.on('exit', (code) => fail(`the built daemon exited early with code ${code}`));
child.stderr.on('data', (chunk) => {
  stderr += chunk;
  const url = /agentd listening on (http:\/\/\S+)/.exec(stderr)?.[1];
  if (!url || checking) return;
  checking = true;
  clearTimeout(timer);
  child.removeAllListeners('exit');
  try {
    const out = execFileSync(process.execPath, [cli, 'call', 'system.ping', '--url', url, '--token', token]);
    if (!JSON.parse(String(out)).pong) fail('system.ping did not answer pong');
  } catch (error) {
    fail(`system.ping through the built CLI failed: ${error.message}`);
  }
  // The build step built the web console too: the bundled daemon must find and serve it.
  fetch(`${url}/`).then(
    (response) => {
      const csp = response.headers.get('content-security-policy') ?? '';
      if (response.status !== 200 || !csp.includes("frame-ancestors 'none'"))
        fail(`GET / answered ${response.status} (CSP: ${csp || 'none'}), not the built console`);
      else stopDaemon();
    },
    (error) => fail(`GET / failed: ${error.message}`),
  );
});

function stopDaemon() {
  child.on('exit', (code) => {
    rmSync(dataDir, { recursive: true, force: true });
    if (code !== 0) fail(`SIGTERM shutdown exited with code ${code}`);
    console.log(`smoke: built daemon started, answered system.ping, served the console, stopped cleanly`);
  });
  child.kill('SIGTERM');
}
