import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openSecrets } from '@agentd/secrets';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { listenLocal } from '../../../packages/channels/test/fake-server.js';
import { type DoctorReport, runDoctor } from '../src/doctor/doctor.js';
import { ADMIN_TOKEN, cliNodeArgs, daemonPool } from './helpers.js';

const run = promisify(execFile);
const pool = daemonPool('agentd-doctor-');
afterEach(() => pool.cleanup());

const GOOD = {
  openai: 'sk-good-0123456789',
  telegram: '123456:good-telegram-token',
  slack: 'xoxb-good',
  discord: 'discord-good',
  whatsapp: 'EAAG-good',
};

/**
 * One local server answering as each service documents its identity call: OpenAI `GET /models`
 * (401 `invalid_api_key` otherwise), Telegram `getMe` (401 `Unauthorized`), Slack `auth.test`
 * (HTTP 200 with `ok: false, error: invalid_auth`), Discord `GET /users/@me` with `Bot <token>`
 * (401), and the WhatsApp Cloud API's phone number object (401 OAuthException code 190).
 */
function fakeServices(req: IncomingMessage, res: ServerResponse) {
  const send = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const auth = req.headers.authorization ?? '';
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (req.method === 'HEAD') return res.end();
  if (path === '/v1/models') {
    if (auth === `Bearer ${GOOD.openai}`)
      return send(200, { object: 'list', data: [{ id: 'gpt-x', object: 'model' }] });
    return send(401, {
      error: {
        message: 'Incorrect API key provided',
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      },
    });
  }
  const telegram = /^\/bot([^/]+)\/getMe$/.exec(path);
  if (telegram) {
    if (telegram[1] === GOOD.telegram) {
      return send(200, {
        ok: true,
        result: { id: 123456, is_bot: true, first_name: 'Doc', username: 'doc_bot' },
      });
    }
    return send(401, { ok: false, error_code: 401, description: 'Unauthorized' });
  }
  if (path === '/api/auth.test') {
    if (auth === `Bearer ${GOOD.slack}`) {
      return send(200, {
        ok: true,
        url: 'https://t.slack.com/',
        team: 'Team',
        user: 'docbot',
        team_id: 'T1',
        user_id: 'U1',
      });
    }
    return send(200, { ok: false, error: 'invalid_auth' });
  }
  if (path === '/api/v10/users/@me') {
    if (auth === `Bot ${GOOD.discord}`)
      return send(200, { id: '42', username: 'docbot', discriminator: '0' });
    return send(401, { message: '401: Unauthorized', code: 0 });
  }
  if (path === '/v21.0/15550001111') {
    if (auth === `Bearer ${GOOD.whatsapp}`) {
      return send(200, {
        verified_name: 'Doc Co',
        display_phone_number: '+1 555-000-1111',
        id: '15550001111',
      });
    }
    return send(401, {
      error: { message: 'Invalid OAuth access token.', type: 'OAuthException', code: 190 },
    });
  }
  send(404, { error: 'not found' });
}

const fixture = join(import.meta.dirname, 'fixtures', 'mcp-fixture-server.ts');

function configFor(url: string, keys: typeof GOOD) {
  return {
    providers: {
      entries: {
        upstream: {
          type: 'openai-compatible',
          baseUrl: `${url}/v1`,
          apiKey: '${secret:UPSTREAM_KEY}',
          models: ['gpt-x'],
        },
      },
    },
    channels: {
      telegram: { enabled: true, botToken: keys.telegram, apiBaseUrl: url },
      slack: { enabled: true, botToken: keys.slack, apiBaseUrl: `${url}/api` },
      discord: { enabled: true, botToken: keys.discord, apiBaseUrl: `${url}/api` },
      whatsapp: { enabled: true, accessToken: keys.whatsapp, phoneNumberId: '15550001111', apiBaseUrl: url },
    },
    mcp: { servers: { fixture: { command: process.execPath, args: ['--import', 'tsx', fixture] } } },
  };
}

/** A private data dir holding `config`, as a daemon would leave it. */
function dataDirWith(config: unknown): string {
  const dir = join(pool.tempDir(), 'data');
  mkdirSync(dir, { mode: 0o700 });
  writeFileSync(join(dir, 'config.yaml'), stringify(config), { mode: 0o600 });
  return dir;
}

const byName = (report: DoctorReport, name: string) => report.checks.find((check) => check.name === name);

describe('agentd doctor', () => {
  it('finds every configured provider, platform and MCP server answering, and says so', async () => {
    const services = pool.closeAfter(await listenLocal(fakeServices));
    const dataDir = dataDirWith(configFor(services.url, GOOD));
    const report = await runDoctor({
      dataDir,
      env: { ...process.env, UPSTREAM_KEY: GOOD.openai },
      url: 'http://127.0.0.1:1',
    });
    expect(byName(report, 'config')?.status).toBe('ok');
    expect(byName(report, 'data dir modes')?.status).toBe('ok');
    expect(byName(report, 'provider upstream')).toMatchObject({ status: 'ok' });
    // Each platform's check names the bot or business its credential belongs to.
    for (const [check, owner] of [
      ['channel telegram', '@doc_bot'],
      ['channel slack', 'docbot'],
      ['channel discord', 'docbot'],
      ['channel whatsapp', 'Doc Co'],
    ] as const) {
      expect(byName(report, check)).toMatchObject({ status: 'ok', detail: expect.stringContaining(owner) });
    }
    expect(byName(report, 'mcp fixture')).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/connected, \d+ tools/),
    });
    expect(byName(report, 'clock skew')?.status).toBe('ok');
    // No daemon runs at that address: a warning, not a failure.
    expect(byName(report, 'daemon')?.status).toBe('warn');
    expect(report.ok).toBe(true);
  }, 60_000);

  it('fails each refused credential with a hint, and never prints a credential', async () => {
    const services = pool.closeAfter(await listenLocal(fakeServices));
    const bad = {
      openai: 'sk-bad-9999',
      telegram: '999:bad-token',
      slack: 'xoxb-bad',
      discord: 'discord-bad',
      whatsapp: 'EAAG-bad',
    };
    const config = configFor(services.url, bad);
    config.mcp.servers.fixture.args = ['/nonexistent/server.js'];
    const dataDir = dataDirWith(config);
    const report = await runDoctor({
      dataDir,
      env: { ...process.env, UPSTREAM_KEY: bad.openai },
      url: 'http://127.0.0.1:1',
    });
    for (const name of [
      'provider upstream',
      'channel telegram',
      'channel slack',
      'channel discord',
      'channel whatsapp',
      'mcp fixture',
    ]) {
      expect(byName(report, name), name).toMatchObject({ status: 'fail', hint: expect.any(String) });
    }
    expect(byName(report, 'channel slack')?.detail).toContain('invalid_auth');
    expect(report.ok).toBe(false);
    const text = JSON.stringify(report);
    for (const secret of Object.values(bad)) expect(text).not.toContain(secret);
  }, 60_000);

  it('fails a config that does not validate, and loose file modes, naming what to do', async () => {
    const dataDir = dataDirWith({ gateway: { port: 'not-a-port' } });
    chmodSync(join(dataDir, 'config.yaml'), 0o644);
    const report = await runDoctor({ dataDir, url: 'http://127.0.0.1:1' });
    expect(byName(report, 'config')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('gateway.port'),
    });
    expect(byName(report, 'data dir modes')).toMatchObject({
      status: 'fail',
      hint: expect.stringContaining('chmod'),
    });
    expect(report.ok).toBe(false);
  });

  it('fails a master key that does not open secrets.db', async () => {
    const dataDir = dataDirWith({});
    const right = 'a'.repeat(64);
    const secrets = await openSecrets({ dataDir, env: { AGENTD_MASTER_KEY: right } });
    await secrets.set('SOME_KEY', 'value');
    await secrets.close();
    const good = await runDoctor({ dataDir, env: { AGENTD_MASTER_KEY: right }, url: 'http://127.0.0.1:1' });
    expect(byName(good, 'master key')?.status).toBe('ok');
    const wrong = await runDoctor({
      dataDir,
      env: { AGENTD_MASTER_KEY: 'b'.repeat(64) },
      url: 'http://127.0.0.1:1',
    });
    expect(byName(wrong, 'master key')).toMatchObject({
      status: 'fail',
      hint: expect.stringContaining('master key'),
    });
    const none = await runDoctor({ dataDir, env: {}, url: 'http://127.0.0.1:1' });
    expect(byName(none, 'master key')?.status).toBe('fail');
  });

  it('checks a running daemon through the CLI: a table, --json, and the exit code', async () => {
    const dataDir = pool.tempDir();
    const daemon = await pool.start(dataDir);
    const cli = (...args: string[]) =>
      run(process.execPath, [...cliNodeArgs, 'doctor', '--data-dir', dataDir, '--url', daemon.url, ...args], {
        env: { ...process.env, AGENTD_TOKEN: '' },
      }).then(
        (out) => ({ code: 0, stdout: out.stdout }),
        (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
      );
    const json = await cli('--json', '--token', ADMIN_TOKEN);
    const report = JSON.parse(json.stdout) as DoctorReport;
    expect(byName(report, 'daemon')).toMatchObject({
      status: 'ok',
      detail: expect.stringContaining('system.ping'),
    });
    expect(json.code).toBe(report.ok ? 0 : 1);
    const wrongToken = await cli('--token', 'wrong-token-0123456789');
    expect(wrongToken.code).toBe(1);
    expect(wrongToken.stdout).toMatch(/^daemon\s+FAIL/m);
    expect(wrongToken.stdout).toMatch(/hint: /);
  }, 60_000);
});
