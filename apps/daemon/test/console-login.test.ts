import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createConsoleLoginCode } from '../src/console-login.js';
import { ADMIN_TOKEN, cliNodeArgs, daemonPool, rpcClient } from './helpers.js';

const run = promisify(execFile);
const pool = daemonPool('agentd-console-login-');
afterEach(() => pool.cleanup());

const exchange = (url: string, body: unknown) =>
  fetch(`${url}/console/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('agentd console', () => {
  it('prints the console URL and a one-time link whose code gets an admin token exactly once', async () => {
    const dataDir = pool.tempDir();
    const daemon = await pool.start(dataDir);
    const { stdout } = await run(process.execPath, [
      ...cliNodeArgs,
      'console',
      '--data-dir',
      dataDir,
      '--url',
      daemon.url,
    ]);
    expect(stdout).toContain(`agentd console: ${daemon.url}/`);
    const code = /#login=([\w-]+)/.exec(stdout)?.[1];
    expect(code).toMatch(/^[\w-]{43}$/);
    // Only the code's hash is on disk, private to the owner.
    const file = join(dataDir, 'console-login.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toContain(code!);

    const first = await exchange(daemon.url, { code });
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    const { token, id } = (await first.json()) as { token: string; id: string };
    expect(id).toMatch(/^console-[0-9a-f]{8}$/);
    const asConsole = rpcClient(daemon.url, token);
    expect(await asConsole.call('gateway.status')).toBeTruthy();
    expect(existsSync(file)).toBe(false);

    // The same code again, and a wrong one, are refused and audited.
    expect((await exchange(daemon.url, { code })).status).toBe(401);
    const again = createConsoleLoginCode(dataDir);
    expect((await exchange(daemon.url, { code: `${again.slice(0, -2)}xx` })).status).toBe(401);
    expect((await exchange(daemon.url, { nope: true })).status).toBe(400);
    const audit = (await rpcClient(daemon.url).call('obs.audit.query', { kind: 'auth' })) as {
      rows: Array<{ classification: string; refs: Record<string, unknown> }>;
    };
    const consoleRows = audit.rows.filter((row) => row.refs.transport === 'console');
    expect(consoleRows.map((row) => [row.classification, row.refs.reason])).toEqual(
      expect.arrayContaining([
        ['allowed', 'console_login'],
        ['denied', 'invalid_login_code'],
      ]),
    );
    expect(JSON.stringify(audit.rows)).not.toContain(token);
  });

  it('prints the address the running daemon listens on, not the configured port', async () => {
    const dataDir = pool.tempDir();
    const daemon = await pool.start(dataDir);
    const { AGENTD_URL: _ignored, ...env } = process.env;
    const { stdout } = await run(process.execPath, [...cliNodeArgs, 'console', '--data-dir', dataDir], {
      env,
    });
    expect(stdout).toContain(`agentd console: ${daemon.url}/`);
    expect(stdout).toContain(`${daemon.url}/#login=`);
  });

  it('signs in with a session token: listed with its expiry, never written to config, revoked at logout', async () => {
    const dataDir = pool.tempDir();
    const daemon = await pool.start(dataDir);
    const before = Date.now();
    const response = await exchange(daemon.url, { code: createConsoleLoginCode(dataDir) });
    const { token, id, expiresAt } = (await response.json()) as {
      token: string;
      id: string;
      expiresAt: number;
    };
    const admin = rpcClient(daemon.url);
    const { tokens } = await admin.call<{ tokens: Array<Record<string, unknown>> }>('tokens.list');
    const listed = tokens.find((entry) => entry.id === id);
    expect(listed).toMatchObject({ clientId: 'console', scopes: ['*'], source: 'session', expiresAt });
    expect(expiresAt).toBeGreaterThanOrEqual(before + 8 * 3_600_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 8 * 3_600_000);
    expect(readFileSync(join(dataDir, 'config.yaml'), 'utf8')).not.toContain(id);

    // A call renews it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await rpcClient(daemon.url, token).call('gateway.status')).toBeTruthy();
    const renewed = (await admin.call<{ tokens: Array<Record<string, unknown>> }>('tokens.list')).tokens;
    expect(renewed.find((entry) => entry.id === id)?.expiresAt as number).toBeGreaterThan(expiresAt);

    const logout = (bearer?: string) =>
      fetch(`${daemon.url}/console/logout`, {
        method: 'POST',
        headers: bearer ? { authorization: `Bearer ${bearer}` } : {},
      });
    // The logout of a token that is not a console session leaves it alone.
    expect((await logout(ADMIN_TOKEN)).status).toBe(204);
    expect(await admin.call('system.ping')).toMatchObject({ pong: true });
    expect((await logout()).status).toBe(401);

    expect((await logout(token)).status).toBe(204);
    const after = (await admin.call<{ tokens: Array<{ id: string }> }>('tokens.list')).tokens;
    expect(after.map((entry) => entry.id)).not.toContain(id);
    const refused = await fetch(`${daemon.url}/rpc`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'system.ping' }),
    });
    expect(refused.status).toBe(401);
  });

  it('refuses an expired code', async () => {
    const dataDir = pool.tempDir();
    const daemon = await pool.start(dataDir);
    const code = createConsoleLoginCode(dataDir, Date.now() - 11 * 60_000);
    const response = await exchange(daemon.url, { code });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: string }).error).toContain('expired');
    expect(existsSync(join(dataDir, 'console-login.json'))).toBe(false);
  });
});

describe('the web console route', () => {
  it('keeps the daemon running and answers 503 at / when the console is not built', async () => {
    const dataDir = pool.tempDir();
    const daemon = await pool.start(dataDir, { consoleDir: join(dataDir, 'no-console-here') });
    expect((await fetch(`${daemon.url}/health`)).status).toBe(200);
    const page = await fetch(`${daemon.url}/`);
    expect(page.status).toBe(503);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(await page.text()).toContain('The agentd console is not built');
    expect(await rpcClient(daemon.url).call('system.ping')).toMatchObject({ pong: true });
  });
});
