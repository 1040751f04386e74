import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createHttpClient } from '@agentd/client';
import { openDatabase } from '@agentd/storage';
import type { AgentTurnRunner, WakeTarget } from '@agentd/webhooks-hmac';
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonOptions } from '../src/index.js';
import { ADMIN_TOKEN, daemonPool, turnAnswer } from './helpers.js';

const run = promisify(execFile);
const TOKEN = 'webhook-e2e-token-0123456789abcdefghij';

type TurnRequest = Parameters<AgentTurnRunner['runTurn']>[0];

/** Signs with the openssl CLI, a signer this project did not write. */
function opensslHmac(body: string | Buffer, key: string, algorithm = 'sha256'): string {
  const result = spawnSync('openssl', ['dgst', `-${algorithm}`, '-hmac', key], { input: body });
  if (result.status !== 0) throw new Error(`openssl failed: ${result.stderr}`);
  const hex = /=\s*([0-9a-f]+)\s*$/.exec(result.stdout.toString())?.[1];
  if (!hex) throw new Error(`unexpected openssl output: ${result.stdout}`);
  return hex;
}

/** Sends with the curl CLI; returns status and parsed JSON body. */
async function curl(url: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'agentd-curl-'));
  try {
    const file = join(dir, 'body');
    writeFileSync(file, body);
    const args = ['-s', '-o', '-', '-w', '\n%{http_code}', '-X', 'POST', '--data-binary', `@${file}`];
    args.push('-H', 'content-type: application/json', '-H', 'expect:');
    for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
    const { stdout } = await run('curl', [...args, url]);
    const split = stdout.lastIndexOf('\n');
    return { status: Number(stdout.slice(split + 1)), body: JSON.parse(stdout.slice(0, split)) as unknown };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function send(url: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: response.status, body: (await response.json()) as unknown };
}

function fakeRunner() {
  const requests: TurnRequest[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const runner: AgentTurnRunner = {
    async runTurn(request) {
      requests.push(request);
      for (const waiter of waiters.filter((w) => requests.length >= w.count)) waiter.resolve();
      return turnAnswer(request, `ok ${requests.length}`);
    },
  };
  const received = (count: number) =>
    requests.length >= count
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          waiters.push({ count, resolve });
        });
  return { runner, requests, received };
}

const baseConfig = (webhooks: Record<string, unknown>) => ({
  gateway: { wsHeartbeatMs: 0 },
  webhooks: { enabled: true, token: TOKEN, ...webhooks },
});

const pool = daemonPool('agentd-hooks-');
/** The data dir of the test's daemons: a restart in the same test keeps it. */
let dataDir: string | undefined;

afterEach(async () => {
  await pool.cleanup();
  dataDir = undefined;
});

async function start(config: Record<string, unknown> | undefined, extra: Partial<DaemonOptions> = {}) {
  dataDir ??= pool.tempDir();
  return pool.start(dataDir, { config, env: { HOOK_SECRET: TOKEN }, ...extra });
}

const strictBody = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ event: 'deploy.finished', source: 'ci', data: { build: 41 }, ...extra });

describe('POST /hooks/webhook (strict)', () => {
  it('accepts an openssl-signed event with exactly {received:true} and runs one agent turn', async () => {
    const fake = fakeRunner();
    const d = await start(baseConfig({}), { agentRunner: fake.runner });
    const body = strictBody({ timestamp: '2025-06-01T10:00:00Z' });
    const result = await send(`${d.url}/hooks/webhook`, body, {
      'x-webhook-signature': opensslHmac(body, TOKEN),
      'x-webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    });
    expect(result).toEqual({ status: 200, body: { received: true } });
    await fake.received(1);
    expect(fake.requests[0]).toMatchObject({
      origin: 'hook',
      sessionKey: 'hook:webhook:ci',
      message: 'Webhook event deploy.finished from ci\n{"build":41}',
    });
  });

  it('answers 401 for a tampered body sent by curl and never reaches the agent', async () => {
    const fake = fakeRunner();
    const d = await start(baseConfig({}), { agentRunner: fake.runner });
    const body = strictBody();
    const signature = opensslHmac(body, TOKEN);
    const tampered = body.replace('41', '42');
    const result = await curl(`${d.url}/hooks/webhook`, tampered, { 'x-webhook-signature': signature });
    expect(result).toEqual({ status: 401, body: { error: 'Invalid signature' } });
    expect((await curl(`${d.url}/hooks/webhook`, body)).status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fake.requests).toHaveLength(0);
  });

  it('acknowledges a replayed delivery id with 200 without running the agent twice', async () => {
    const fake = fakeRunner();
    const d = await start(baseConfig({}), { agentRunner: fake.runner });
    const body = strictBody();
    const headers = { 'x-webhook-signature': opensslHmac(body, TOKEN), 'x-webhook-id': 'delivery-7' };
    expect((await send(`${d.url}/hooks/webhook`, body, headers)).status).toBe(200);
    expect(await curl(`${d.url}/hooks/webhook`, body, headers)).toEqual({
      status: 200,
      body: { received: true },
    });
    await fake.received(1);
    const other = { ...headers, 'x-webhook-id': 'delivery-8' };
    expect((await send(`${d.url}/hooks/webhook`, body, other)).status).toBe(200);
    await fake.received(2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fake.requests).toHaveLength(2);
  });

  it('answers 401 for a stale or future timestamp', async () => {
    const d = await start(baseConfig({}));
    const body = strictBody();
    const signature = opensslHmac(body, TOKEN);
    const nowS = Math.floor(Date.now() / 1000);
    for (const stamp of [nowS - 301, nowS + 400]) {
      const result = await send(`${d.url}/hooks/webhook`, body, {
        'x-webhook-signature': signature,
        'x-webhook-timestamp': String(stamp),
      });
      expect(result.status).toBe(401);
    }
  });

  it('answers 400 for invalid JSON and 422 with issues for a schema failure', async () => {
    const d = await start(baseConfig({}));
    const broken = '{"event": "x",';
    expect(
      await send(`${d.url}/hooks/webhook`, broken, { 'x-webhook-signature': opensslHmac(broken, TOKEN) }),
    ).toEqual({ status: 400, body: { error: 'Invalid JSON' } });
    const wrong = JSON.stringify({ event: 'x', source: 'ci', data: 'not an object' });
    const result = await curl(`${d.url}/hooks/webhook`, wrong, {
      'x-webhook-signature': opensslHmac(wrong, TOKEN),
    });
    expect(result.status).toBe(422);
    expect(result.body).toMatchObject({ error: 'Invalid payload', issues: [{ path: ['data'] }] });
  });

  it('answers 400 for a body above maxBodyBytes (262144 by default)', async () => {
    const d = await start(baseConfig({ mappings: [{ id: 'all' }] }));
    const big = JSON.stringify({ pad: 'x'.repeat(262_144) });
    const signature = opensslHmac(big, TOKEN);
    const viaFetch = await send(`${d.url}/hooks/webhook`, big, { 'x-webhook-signature': signature });
    expect(viaFetch).toEqual({ status: 400, body: { error: 'Payload too large (maximum 262144 bytes)' } });
    const viaCurl = await curl(`${d.url}/hooks/anything`, big, { 'x-webhook-signature': signature });
    expect(viaCurl.status).toBe(400);
  });
});

describe('POST /hooks/:path (mapped)', () => {
  it('routes to the first matching mapping, renders templates and honours agentId, model and timeout', async () => {
    const fake = fakeRunner();
    const d = await start(
      baseConfig({
        token: undefined,
        mappings: [
          {
            id: 'alerts',
            match: { path: 'alerts', source: 'pager' },
            agentId: 'ops',
            model: 'small',
            timeoutSeconds: 45,
            sessionKey: 'hook:alerts:{{payload.incident.id}}',
            messageTemplate: 'Incident {{incident.title}} ({{query.severity}}) via {{headers.user-agent}}',
          },
          { id: 'alerts-other', match: { path: 'alerts' } },
        ],
      }),
      { agentRunner: fake.runner },
    );
    const body = JSON.stringify({ source: 'pager', incident: { id: 'INC-9', title: 'Disk full' } });
    const result = await send(`${d.url}/hooks/Alerts/?severity=high`, body, { 'user-agent': 'pager/1.0' });
    expect(result).toEqual({ status: 200, body: { received: true, mapping: 'alerts' } });
    const other = await send(`${d.url}/hooks/alerts`, JSON.stringify({ source: 'mail' }));
    expect(other.body).toEqual({ received: true, mapping: 'alerts-other' });
    await fake.received(2);
    expect(fake.requests[0]).toMatchObject({
      agentId: 'ops',
      model: 'small',
      timeoutMs: 45_000,
      sessionKey: 'hook:alerts:INC-9',
      message: 'Incident Disk full (high) via pager/1.0',
    });
  });

  it('answers 404 for an unmatched path and 401 for an unsigned request when a token is set', async () => {
    const d = await start(baseConfig({ mappings: [{ id: 'only', match: { path: 'only' } }] }));
    const body = '{}';
    const signature = opensslHmac(body, TOKEN);
    expect(await curl(`${d.url}/hooks/nowhere`, body, { 'x-webhook-signature': signature })).toEqual({
      status: 404,
      body: { error: 'No mapping matched' },
    });
    expect((await send(`${d.url}/hooks/only`, body)).status).toBe(401);
    expect((await send(`${d.url}/hooks/only`, body, { 'x-webhook-signature': signature })).status).toBe(200);
  });

  it('runs the mail preset', async () => {
    const fake = fakeRunner();
    const d = await start(baseConfig({ presets: ['mail', 'pager-of-the-future'] }), {
      agentRunner: fake.runner,
    });
    const body = JSON.stringify({
      messages: [
        {
          id: 'msg-1',
          from: 'ada@example.org',
          subject: 'Invoice',
          snippet: 'Please pay',
          body: 'Due Friday',
        },
      ],
    });
    const result = await curl(`${d.url}/hooks/mail`, body, {
      'x-webhook-signature': opensslHmac(body, TOKEN),
    });
    expect(result).toEqual({ status: 200, body: { received: true, mapping: 'mail' } });
    await fake.received(1);
    expect(fake.requests[0]).toMatchObject({
      sessionKey: 'hook:mail:msg-1',
      message: 'From: ada@example.org\nSubject: Invoice\nSnippet: Please pay\nBody: Due Friday',
    });
  });

  it('runs the codehost preset with its prefixed signature header and delivery id', async () => {
    const fake = fakeRunner();
    const d = await start(baseConfig({ presets: ['codehost'] }), { agentRunner: fake.runner });
    const body = JSON.stringify({
      action: 'opened',
      repository: { full_name: 'acme/rockets' },
      sender: { login: 'wile' },
    });
    const headers = {
      'x-codehost-signature-256': `sha256=${opensslHmac(body, TOKEN)}`,
      'x-codehost-event': 'pull_request',
      'x-codehost-delivery': 'f0e1d2c3',
    };
    expect(await curl(`${d.url}/hooks/codehost`, body, headers)).toEqual({
      status: 200,
      body: { received: true, mapping: 'codehost' },
    });
    expect((await curl(`${d.url}/hooks/codehost`, body, headers)).status).toBe(200);
    await fake.received(1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toMatchObject({
      sessionKey: 'hook:codehost:f0e1d2c3',
      message: 'Event: pull_request\nRepository: acme/rockets\nAction: opened\nSender: wile',
    });
  });

  it('verifies against a token given as a secret reference', async () => {
    const d = await start(baseConfig({ token: '${secret:HOOK_SECRET}', mappings: [{ id: 'x' }] }));
    const body = '{"a":1}';
    expect(
      (await send(`${d.url}/hooks/x`, body, { 'x-webhook-signature': opensslHmac(body, TOKEN) })).status,
    ).toBe(200);
    expect(
      (await send(`${d.url}/hooks/x`, body, { 'x-webhook-signature': opensslHmac(body, 'x'.repeat(40)) }))
        .status,
    ).toBe(401);
  });
});

describe('webhooks config', () => {
  it('answers 404 on every hook path while disabled and follows webhooks.path once enabled', async () => {
    const d = await start({ gateway: { wsHeartbeatMs: 0 } });
    const body = strictBody();
    const headers = { 'x-webhook-signature': opensslHmac(body, TOKEN) };
    expect((await send(`${d.url}/hooks/webhook`, body, headers)).status).toBe(404);
    const client = createHttpClient({ url: d.url, token: ADMIN_TOKEN });
    await client.call('config.patch', { webhooks: { enabled: true, token: TOKEN, path: '/inbound' } });
    expect((await send(`${d.url}/inbound/webhook`, body, headers)).status).toBe(200);
    expect((await send(`${d.url}/hooks/webhook`, body, headers)).status).toBe(404);
    await client.call('config.patch', { webhooks: { enabled: false } });
    expect((await send(`${d.url}/inbound/webhook`, body, headers)).status).toBe(404);
  });

  it('accepts a previous token during a rotation and redacts every token in config.read', async () => {
    const previous = 'the-previous-webhook-token-0123456789';
    const d = await start(baseConfig({ previousTokens: [{ token: previous }], mappings: [{ id: 'x' }] }));
    const body = '{}';
    expect(
      (await send(`${d.url}/hooks/x`, body, { 'x-webhook-signature': opensslHmac(body, previous) })).status,
    ).toBe(200);
    const client = createHttpClient({ url: d.url, token: ADMIN_TOKEN });
    const section = JSON.stringify(await client.call('config.read', { section: 'webhooks' }));
    expect(section).not.toContain(TOKEN);
    expect(section).not.toContain(previous);
    expect(section).toContain('[REDACTED]');
  });

  it('refuses a token shorter than 32 characters as a config validation error', async () => {
    await expect(start(baseConfig({ token: 'short-token' }))).rejects.toThrow(/token/);
  });
});

describe('durability', () => {
  it('keeps accepted agent webhooks across a restart until a runner drains them', async () => {
    const config = baseConfig({ mappings: [{ id: 'jobs', messageTemplate: 'job {{n}}' }] });
    // A runner that never finishes: the first job is in flight when the daemon stops.
    const stuck: AgentTurnRunner = {
      runTurn: (request) =>
        new Promise((_, reject) => {
          request.signal?.addEventListener('abort', () => reject(new Error('stopped')));
        }),
    };
    const d = await start(config, { agentRunner: stuck });
    for (const n of [1, 2, 3]) {
      const body = JSON.stringify({ n });
      expect(
        (await send(`${d.url}/hooks/jobs`, body, { 'x-webhook-signature': opensslHmac(body, TOKEN) })).status,
      ).toBe(200);
    }
    await d.stop();

    const fake = fakeRunner();
    await start(undefined, { agentRunner: fake.runner });
    await fake.received(3);
    expect(fake.requests.map((request) => request.message)).toEqual(['job 1', 'job 2', 'job 3']);
  });

  it('runs agent webhooks as turns of the built-in agent runtime when no runner is given', async () => {
    const d = await start(
      baseConfig({ mappings: [{ id: 'ping', messageTemplate: 'ping {{n}}', sessionKey: 'hook:ping' }] }),
    );
    const body = JSON.stringify({ n: 7 });
    expect(
      (await send(`${d.url}/hooks/ping`, body, { 'x-webhook-signature': opensslHmac(body, TOKEN) })).status,
    ).toBe(200);
    const admin = createHttpClient({ url: d.url, token: ADMIN_TOKEN });
    let history: { messages: Array<{ role: string; content: string }> } = { messages: [] };
    for (let attempt = 0; attempt < 100 && history.messages.length < 2; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      history = (await admin.call('session.history', { key: 'hook:ping' })) as typeof history;
    }
    expect(history.messages[0]).toMatchObject({ role: 'user', content: 'ping 7' });
    expect(history.messages.at(-1)?.role).toBe('assistant');
  });

  it('runs a queued turn once when the daemon died after committing it but before marking the job done', async () => {
    const config = baseConfig({
      mappings: [{ id: 'once', messageTemplate: 'once {{n}}', sessionKey: 'hook:once:{{n}}' }],
    });
    const d = await start(config);
    const admin = createHttpClient({ url: d.url, token: ADMIN_TOKEN });
    const sessions = [1, 2, 3, 4, 5, 6];
    for (const n of sessions) {
      const body = JSON.stringify({ n });
      expect(
        (await send(`${d.url}/hooks/once`, body, { 'x-webhook-signature': opensslHmac(body, TOKEN) })).status,
      ).toBe(200);
    }
    // A session appears with its turn's commit; until then history answers not found.
    const roles = (n: number) =>
      (
        admin.call('session.history', { key: `hook:once:${n}` }) as Promise<{
          messages: Array<{ role: string }>;
        }>
      )
        .then((answer) => answer.messages.map((message) => message.role))
        .catch(() => []);
    for (const n of sessions) {
      for (let attempt = 0; attempt < 200 && (await roles(n)).length < 2; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
    await d.stop();
    // What a kill -9 between the turn's commit and the queue's 'done' leaves behind.
    const db = await openDatabase({ dataDir: dataDir! });
    await db.execute("UPDATE webhook_agent_queue SET status = 'running', finished_at = NULL");
    await db.close();

    const again = await start(undefined);
    const adminAgain = createHttpClient({ url: again.url, token: ADMIN_TOKEN });
    const reopened = await openDatabase({ dataDir: dataDir! });
    for (let attempt = 0; attempt < 200; attempt++) {
      const left = await reopened.get<{ n: number }>(
        "SELECT count(*) AS n FROM webhook_agent_queue WHERE status <> 'done'",
      );
      if (Number(left?.n) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await reopened.close();
    for (const n of sessions) {
      const messages = (
        (await adminAgain.call('session.history', { key: `hook:once:${n}` })) as {
          messages: Array<{ role: string }>;
        }
      ).messages;
      expect(
        messages.map((message) => message.role),
        `session ${n}`,
      ).toEqual(['user', 'assistant']);
    }
  });

  it("wakes the daemon's own heartbeat, which runs a beat carrying the text", async () => {
    const d = await start(
      baseConfig({
        token: undefined,
        mappings: [{ id: 'nudge', action: 'wake', messageTemplate: 'Check {{what}}' }],
      }),
    );
    expect((await send(`${d.url}/hooks/nudge`, '{"what":"mail"}')).body).toEqual({
      received: true,
      mapping: 'nudge',
    });
    const admin = createHttpClient({ url: d.url, token: ADMIN_TOKEN });
    let beats: Array<{ sources: string[]; status: string; queuedTexts: number }> = [];
    for (let attempt = 0; attempt < 100 && beats.length === 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      beats = ((await admin.call('heartbeat.history', {})) as { beats: typeof beats }).beats;
    }
    expect(beats[0]).toMatchObject({ sources: ['webhook'], status: 'ok', queuedTexts: 1 });
  });

  it('hands wakes to an embedder-given target: now at once, next-heartbeat queued', async () => {
    const calls: string[] = [];
    const wakeTarget: WakeTarget = {
      wakeNow: (text) => calls.push(`now:${text}`),
      queueForNextBeat: (text) => calls.push(`next:${text}`),
    };
    const live = await start(
      baseConfig({
        token: undefined,
        mappings: [
          // Without `match` a mapping matches every path, so each names its own.
          { id: 'nudge', match: { path: 'nudge' }, action: 'wake', messageTemplate: 'Check {{what}}' },
          {
            id: 'later',
            match: { path: 'later' },
            action: 'wake',
            wakeMode: 'next-heartbeat',
            textTemplate: 'Later {{what}}',
          },
        ],
      }),
      { wakeTarget },
    );
    await send(`${live.url}/hooks/nudge`, '{"what":"mail"}');
    expect(calls).toEqual(['now:Check mail']);
    await send(`${live.url}/hooks/later`, '{"what":"builds"}');
    expect(calls).toEqual(['now:Check mail', 'next:Later builds']);
  });

  it('counts accepted and rejected webhooks in libsql and logs them without body or signature', async () => {
    const d = await start(baseConfig({ mappings: [{ id: 'count-me' }] }));
    const body = JSON.stringify({ secretValue: 'do-not-log-this-payload' });
    const signature = opensslHmac(body, TOKEN);
    await send(`${d.url}/hooks/count-me`, body, { 'x-webhook-signature': signature });
    await send(`${d.url}/hooks/count-me`, body, { 'x-webhook-signature': signature });
    await send(`${d.url}/hooks/count-me`, body, { 'x-webhook-signature': '0'.repeat(64) });
    await send(`${d.url}/hooks/count-me`, body);
    await d.stop();

    const db = await openDatabase({ dataDir: dataDir! });
    const rows = await db.query<{ outcome: string; reason: string; mapping_id: string; count: number }>(
      'SELECT outcome, reason, mapping_id, count FROM webhook_counters ORDER BY outcome, reason',
    );
    const queued = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM webhook_agent_queue');
    await db.close();
    expect(rows).toEqual([
      { outcome: 'accepted', reason: 'ok', mapping_id: 'count-me', count: 2 },
      { outcome: 'rejected', reason: 'signature_mismatch', mapping_id: '', count: 1 },
      { outcome: 'rejected', reason: 'signature_missing', mapping_id: '', count: 1 },
    ]);
    expect(queued?.n).toBe(2);

    const log = readFileSync(join(dataDir!, 'logs', 'agentd.log'), 'utf8');
    const lines = log
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.module === 'webhooks');
    expect(lines.filter((line) => line.msg === 'webhook accepted')).toHaveLength(2);
    expect(lines.filter((line) => line.msg === 'webhook rejected')).toHaveLength(2);
    expect(lines.find((line) => line.msg === 'webhook rejected')).toMatchObject({
      errorKind: 'auth',
      status: 401,
    });
    expect(log).not.toContain('do-not-log-this-payload');
    expect(log).not.toContain(signature);
  });
});
