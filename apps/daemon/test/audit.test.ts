import { createHmac } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { createHttpClient, RpcCallError } from '@agentd/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonOptions } from '../src/index.js';
import { ADMIN_TOKEN, daemonPool, editConfigFile, quietRunner, rpcClient } from './helpers.js';

type Json = Record<string, unknown>;
interface AuditRow {
  kind: string;
  classification: string;
  outcome: string;
  severity: string;
  refs: Json;
}
interface AuditLine {
  ts: string;
  method: string;
  sections: string[];
  sha?: string;
  tokenId?: string;
  outcome: string;
  reason?: string;
}

// Planted values: none of them may ever appear in an audit row or in the config-audit file.
const CONFIG_SECRET = 'planted-config-secret-value-0123456789abcdef';
const PLAINTEXT_TOKEN = 'planted-plaintext-token-0123456789abcdef';
const HOOK_SECRET = 'planted-webhook-hmac-secret-0123456789abcdef';

const pool = daemonPool('agentd-audit-');
afterEach(() => pool.cleanup());

async function start(config?: Json, extra: Partial<DaemonOptions> = {}) {
  const dataDir = pool.tempDir();
  const daemon = await pool.start(dataDir, { config, agentRunner: quietRunner, ...extra });
  const client = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
  return {
    daemon,
    dataDir,
    ...rpcClient(daemon.url),
    /** Rows oldest first (the query answers newest first). */
    rows: async (filter: Json = {}) =>
      ((await client.call('obs.audit.query', filter)) as { rows: AuditRow[] }).rows.reverse(),
  };
}

const auditFile = (dir: string) => join(dir, 'logs', 'config-audit.jsonl');

function readLines(path: string): AuditLine[] {
  const text = path.endsWith('.gz')
    ? gunzipSync(readFileSync(path)).toString('utf8')
    : readFileSync(path, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as AuditLine);
}

const sign = (body: string, secret = HOOK_SECRET) => createHmac('sha256', secret).update(body).digest('hex');

async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

describe('config writes', () => {
  it('records every config write with its sections, commit and caller token, never a value', async () => {
    const d = await start();
    const patched = await d.call<{ sha: string }>('config.patch', { webhooks: { token: CONFIG_SECRET } });
    const set = await d.call<{ sha: string }>('config.set', {
      section: 'webhooks',
      key: 'maxBodyBytes',
      value: 1000,
    });
    expect((await d.fail('config.patch', { gateway: { port: 'not a port' } })).code).toBe(-32602);
    const refused = await d.fail('config.patch', {
      gateway: { tokens: [{ id: 'sneaky', token: PLAINTEXT_TOKEN, scopes: ['*'] }] },
    });
    expect(refused.code).toBe(-32602);
    // A whole config: every section as stored, with one value changed.
    const { sections } = await d.call<{ sections: string[] }>('config.read');
    const whole: Json = {};
    for (const section of sections) whole[section] = await d.call('config.get', { section });
    (whole.webhooks as Json).maxBodyBytes = 2000;
    const applied = await d.call<{ sha: string }>('config.apply', whole);
    const rolled = await d.call<{ sha: string }>('config.rollback', { sha: patched.sha });
    expect((await d.fail('config.rollback', { sha: 'deadbeef' })).code).toBe(-32004);

    const lines = readLines(auditFile(d.dataDir));
    expect(lines[0]).toMatchObject({ method: 'bootstrap', sections: ['gateway'], outcome: 'success' });
    expect(lines[0]).not.toHaveProperty('tokenId');
    // The seven changes after the bootstrap line, as [outcome, severity, what both records name].
    // The audit file adds the caller as `tokenId` and the outcome; the evidence rows say `caller`.
    const changes = [
      ['success', 'medium', { method: 'config.patch', sections: ['webhooks'], sha: patched.sha }],
      ['success', 'medium', { method: 'config.set', sections: ['webhooks'], sha: set.sha }],
      ['failure', 'medium', { method: 'config.patch', sections: ['gateway'], reason: 'invalid' }],
      ['failure', 'medium', { method: 'config.patch', sections: ['gateway'], reason: 'write_policy' }],
      ['success', 'medium', { method: 'config.apply', sections: ['webhooks'], sha: applied.sha }],
      ['success', 'medium', { method: 'config.rollback', sections: ['webhooks'], sha: rolled.sha }],
      ['failure', 'low', { method: 'config.rollback', sections: [], reason: 'commit_not_found' }],
    ] as const;
    expect(lines.slice(1).map(({ ts: _ts, ...rest }) => rest)).toEqual(
      changes.map(([outcome, , refs]) => ({ ...refs, tokenId: 'admin', outcome })),
    );
    for (const line of lines) expect(Number.isNaN(Date.parse(line.ts))).toBe(false);
    // The commits named are the config history's own.
    const history = await d.call<{ entries: Array<{ sha: string }> }>('config.history', { limit: 50 });
    expect(history.entries.map((entry) => entry.sha)).toEqual(
      expect.arrayContaining([patched.sha, set.sha, applied.sha, rolled.sha]),
    );

    const rows = await d.rows({ kind: 'config' });
    expect(rows.map((row) => [row.classification, row.outcome, row.severity, row.refs])).toEqual(
      changes.map(([outcome, severity, refs]) => [
        'allowed',
        outcome,
        severity,
        { ...refs, caller: 'admin' },
      ]),
    );
    const failures = await d.rows({ kind: 'config', outcome: 'failure' });
    expect(failures.map((row) => row.refs.reason)).toEqual(['invalid', 'write_policy', 'commit_not_found']);

    const everything =
      JSON.stringify(await d.rows({ limit: 1000 })) + readFileSync(auditFile(d.dataDir), 'utf8');
    expect(everything).not.toContain(CONFIG_SECRET);
    expect(everything).not.toContain(PLAINTEXT_TOKEN);
    expect(everything).not.toContain(ADMIN_TOKEN);
  });

  it('rates a write that touches no sensitive section low', async () => {
    const d = await start();
    await d.call('config.set', { section: 'graph', key: 'defaultConcurrency', value: 2 });
    const [row] = await d.rows({ kind: 'config' });
    expect(row).toMatchObject({
      outcome: 'success',
      severity: 'low',
      refs: { method: 'config.set', sections: ['graph'] },
    });
  });

  it('attributes config persisted by another admin method to that method and its caller', async () => {
    const d = await start();
    await d.call('heartbeat.update', { intervalMs: 120_000 });
    const line = readLines(auditFile(d.dataDir)).at(-1);
    expect(line).toMatchObject({
      method: 'heartbeat.update',
      sections: ['heartbeat'],
      tokenId: 'admin',
      outcome: 'success',
    });
    const head = (await d.call<{ entries: Array<{ sha: string }> }>('config.history', { limit: 1 }))
      .entries[0]?.sha;
    expect(line?.sha).toBe(head);
    const rows = await d.rows({ kind: 'config' });
    expect(rows.map((row) => [row.severity, row.refs])).toEqual([
      ['low', { method: 'heartbeat.update', sections: ['heartbeat'], sha: head, caller: 'admin' }],
    ]);
  });

  it('records a hand edit picked up on reload as method reload, and a rejected reload as a failure', async () => {
    const d = await start();
    editConfigFile(d.dataDir, (onDisk) => ({
      ...onDisk,
      webhooks: { ...(onDisk.webhooks as Json), maxBodyBytes: 4096 },
    }));
    await d.daemon.reload();
    const head = (await d.call<{ entries: Array<{ sha: string }> }>('config.history', { limit: 1 }))
      .entries[0]?.sha;
    writeFileSync(join(d.dataDir, 'config.yaml'), 'gateway:\n  port: "not a port"\n');
    await expect(d.daemon.reload()).rejects.toThrow();

    const reloads = readLines(auditFile(d.dataDir)).filter((line) => line.method === 'reload');
    expect(reloads.map(({ ts: _ts, ...rest }) => rest)).toEqual([
      { method: 'reload', sections: ['webhooks'], sha: head, outcome: 'success' },
      { method: 'reload', sections: [], outcome: 'failure', reason: 'invalid' },
    ]);
    const rows = await d.rows({ kind: 'config' });
    expect(rows.map((row) => [row.outcome, row.refs.method, row.refs.reason ?? null])).toEqual([
      ['success', 'reload', null],
      ['failure', 'reload', 'invalid'],
    ]);
    expect(rows[0]?.refs).not.toHaveProperty('caller');
  });

  it('attributes the reload of gateway.restart to the caller and audits the restart itself', async () => {
    const d = await start();
    editConfigFile(d.dataDir, (onDisk) => ({
      ...onDisk,
      graph: { ...(onDisk.graph as Json), defaultConcurrency: 3 },
    }));
    expect(await d.call('gateway.restart')).toEqual({ ok: true, restarting: true });
    let reload: AuditLine | undefined;
    // The restart runs after the answer; wait (bounded) for its reload line.
    for (let attempt = 0; attempt < 100 && !reload; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      reload = readLines(auditFile(d.dataDir)).find((line) => line.method === 'reload');
    }
    expect(reload).toMatchObject({
      method: 'reload',
      sections: ['graph'],
      tokenId: 'admin',
      outcome: 'success',
    });
    const rows = await d.rows({ kind: 'config' });
    expect(rows.map((row) => [row.severity, row.refs.action ?? row.refs.method, row.refs.caller])).toEqual([
      ['medium', 'gateway_restart', 'admin'],
      ['low', 'reload', 'admin'],
    ]);
  });

  it('audits daemon.setLogLevel, medium when the level hides info lines', async () => {
    const d = await start();
    await d.call('daemon.setLogLevel', { module: 'agent', level: 'debug' });
    await d.call('daemon.setLogLevel', { module: 'agent', level: 'error' });
    const rows = await d.rows({ kind: 'config' });
    expect(rows.map((row) => [row.severity, row.refs])).toEqual([
      [
        'low',
        {
          action: 'set_log_level',
          method: 'daemon.setLogLevel',
          caller: 'admin',
          module: 'agent',
          level: 'debug',
          previous: 'info',
        },
      ],
      [
        'medium',
        {
          action: 'set_log_level',
          method: 'daemon.setLogLevel',
          caller: 'admin',
          module: 'agent',
          level: 'error',
          previous: 'debug',
        },
      ],
    ]);
    // A log level is runtime state, not config.yaml: the config-audit file only has the first-start token.
    expect(readLines(auditFile(d.dataDir)).map((line) => line.method)).toEqual(['bootstrap']);
  });
});

describe('token lifecycle', () => {
  it('records creation and revocation with token ids and scopes, never the secret', async () => {
    const d = await start();
    const app = await d.call<{ token: string }>('tokens.create', { scopes: ['rpc'], id: 'app' });
    const ops = await d.call<{ token: string }>('tokens.create', {
      scopes: ['*'],
      id: 'ops',
      clientId: 'pager',
    });
    expect((await d.fail('tokens.create', { scopes: ['admin'], id: 'app' })).code).toBe(-32602);
    await d.call('tokens.revoke', { id: 'app' });
    expect((await d.fail('tokens.revoke', { id: 'missing' })).code).toBe(-32004);
    await d.call('tokens.revoke', { id: 'ops' });
    expect((await d.fail('tokens.revoke', { id: 'admin' })).code).toBe(-32602);

    const rows = await d.rows({ kind: 'auth' });
    expect(rows.map((row) => [row.classification, row.outcome, row.severity, row.refs])).toEqual([
      [
        'allowed',
        'success',
        'low',
        { action: 'token_create', caller: 'admin', scopes: ['rpc'], subject: 'app', client: 'app' },
      ],
      [
        'allowed',
        'success',
        'high',
        { action: 'token_create', caller: 'admin', scopes: ['all'], subject: 'ops', client: 'pager' },
      ],
      [
        'allowed',
        'failure',
        'low',
        { action: 'token_create', caller: 'admin', scopes: ['admin'], subject: 'app', reason: 'exists' },
      ],
      [
        'allowed',
        'success',
        'low',
        { action: 'token_revoke', caller: 'admin', subject: 'app', scopes: ['rpc'], forced: false },
      ],
      [
        'allowed',
        'failure',
        'low',
        { action: 'token_revoke', caller: 'admin', subject: 'missing', forced: false, reason: 'not_found' },
      ],
      [
        'allowed',
        'success',
        'high',
        { action: 'token_revoke', caller: 'admin', subject: 'ops', scopes: ['all'], forced: false },
      ],
      [
        'denied',
        'failure',
        'medium',
        {
          action: 'token_revoke',
          caller: 'admin',
          subject: 'admin',
          scopes: ['all'],
          forced: false,
          reason: 'last_admin',
        },
      ],
    ]);
    expect((await d.rows({ kind: 'auth', classification: 'denied' })).map((row) => row.refs.reason)).toEqual([
      'last_admin',
    ]);

    // The token list lives in config.yaml: each persisted change is a config-audit line of its method.
    const lines = readLines(auditFile(d.dataDir)).map(({ ts: _ts, sha: _sha, ...rest }) => rest);
    expect(lines).toEqual([
      { method: 'bootstrap', sections: ['gateway'], outcome: 'success' },
      { method: 'tokens.create', sections: ['gateway'], tokenId: 'admin', outcome: 'success' },
      { method: 'tokens.create', sections: ['gateway'], tokenId: 'admin', outcome: 'success' },
      { method: 'tokens.revoke', sections: ['gateway'], tokenId: 'admin', outcome: 'success' },
      { method: 'tokens.revoke', sections: ['gateway'], tokenId: 'admin', outcome: 'success' },
    ]);
    const configRows = await d.rows({ kind: 'config' });
    expect(configRows.map((row) => [row.severity, row.refs.method, row.refs.caller])).toEqual([
      ['medium', 'tokens.create', 'admin'],
      ['medium', 'tokens.create', 'admin'],
      ['medium', 'tokens.revoke', 'admin'],
      ['medium', 'tokens.revoke', 'admin'],
    ]);

    const everything =
      JSON.stringify(await d.rows({ limit: 1000 })) + readFileSync(auditFile(d.dataDir), 'utf8');
    for (const secret of [app.token, ops.token, ADMIN_TOKEN]) expect(everything).not.toContain(secret);
    expect(everything).not.toContain('sha256:');
  });
});

describe('scope checks', () => {
  it('names the caller token of a denied scope check', async () => {
    const d = await start();
    const app = await d.call<{ token: string }>('tokens.create', { scopes: ['rpc'], id: 'app' });
    const client = createHttpClient({ url: d.daemon.url, token: app.token });
    await expect(client.call('config.read', {})).rejects.toBeInstanceOf(RpcCallError);
    const rows = await d.rows({ kind: 'scope' });
    expect(rows.map((row) => [row.classification, row.outcome, row.severity, row.refs])).toEqual([
      ['denied', 'failure', 'medium', { caller: 'app', requiredScope: 'admin' }],
    ]);
    expect(JSON.stringify(rows)).not.toContain(app.token);
  });
});

describe('webhook decisions', () => {
  it('records signature rejections as denied with a closed reason and verified requests as allowed', async () => {
    const d = await start({
      webhooks: { enabled: true, token: HOOK_SECRET, mappings: [{ id: 'gh', match: { path: 'github' } }] },
    });
    const body = '{"ref":"main"}';
    const url = `${d.daemon.url}/hooks/github`;
    const nowSec = Math.floor(Date.now() / 1000);
    expect(await post(url, body)).toBe(401);
    expect(
      await post(url, body, { 'x-webhook-signature': sign(body, 'wrong-secret-0123456789abcdef0123456789') }),
    ).toBe(401);
    expect(
      await post(url, body, {
        'x-webhook-signature': sign(body),
        'x-webhook-timestamp': String(nowSec - 3600),
      }),
    ).toBe(401);
    expect(
      await post(url, body, { 'x-webhook-signature': sign(body), 'x-webhook-timestamp': String(nowSec) }),
    ).toBe(200);
    expect(await post(`${d.daemon.url}/hooks/webhook`, body)).toBe(401);
    // Not security decisions worth a row: a verified delivery (routine, like a bearer token that
    // checks out) and a path with no mapping (counted by the webhook store).
    expect(await post(`${d.daemon.url}/hooks/nowhere`, body, { 'x-webhook-signature': sign(body) })).toBe(
      404,
    );

    const rows = await d.rows({ kind: 'webhook' });
    // Each a 401 refusal: [classification, outcome, severity, refs].
    const refused = (severity: string, endpoint: string, path: string, reason: string) => [
      'denied',
      'failure',
      severity,
      { endpoint, path, reason, status: 401 },
    ];
    expect(rows.map((row) => [row.classification, row.outcome, row.severity, row.refs])).toEqual([
      refused('low', 'mapped', 'github', 'signature_missing'),
      refused('medium', 'mapped', 'github', 'signature_mismatch'),
      refused('medium', 'mapped', 'github', 'timestamp_stale'),
      refused('low', 'strict', 'webhook', 'signature_missing'),
    ]);
    expect((await d.rows({ kind: 'webhook', classification: 'denied' })).length).toBe(4);
    expect(JSON.stringify(await d.rows({ limit: 1000 }))).not.toContain(HOOK_SECRET);
  });

  it('records the first unsigned acceptance of a path low and a refusal for an unusable secret', async () => {
    const d = await start(
      { webhooks: { enabled: true, mappings: [{ id: 'open', match: { path: 'open' } }] } },
      // A known secret too short for a webhook token (an unknown name is refused at the write).
      { env: { AUDIT_TEST_SHORT_SECRET: 'too-short' } },
    );
    // Three requests, one row: an open endpoint is worth a look once, not a row per request.
    for (let i = 0; i < 3; i++) expect(await post(`${d.daemon.url}/hooks/open`, '{}')).toBe(200);
    await d.call('config.patch', { webhooks: { token: '${secret:AUDIT_TEST_SHORT_SECRET}' } });
    expect(await post(`${d.daemon.url}/hooks/open`, '{}')).toBe(500);
    const rows = await d.rows({ kind: 'webhook' });
    expect(rows.map((row) => [row.classification, row.severity, row.refs.reason, row.refs.path])).toEqual([
      ['allowed', 'low', 'unsigned', 'open'],
      ['denied', 'low', 'secret_unusable', 'open'],
    ]);
  });
});

describe('config-audit file rotation', () => {
  it('rolls at the configured size into gzipped copies without losing or splitting a line', async () => {
    const d = await start(undefined, { configAuditMaxBytes: 600 });
    const values = [1, 2, 3, 4, 5, 6, 7, 8];
    for (const value of values)
      await d.call('config.set', { section: 'graph', key: 'defaultConcurrency', value });
    await d.daemon.stop();

    const logs = join(d.dataDir, 'logs');
    const copies = readdirSync(logs)
      .filter((name) => /^config-audit\.jsonl\.\d+\.gz$/.test(name))
      .sort((left, right) => Number(right.split('.')[2]) - Number(left.split('.')[2]));
    expect(copies.length).toBeGreaterThanOrEqual(2);
    const files = [...copies.map((name) => join(logs, name)), auditFile(d.dataDir)];
    const lines = files.flatMap((file) => readLines(file));
    expect(lines.map((line) => line.method)).toEqual(['bootstrap', ...values.map(() => 'config.set')]);
    for (const file of files) {
      const size = file.endsWith('.gz') ? gunzipSync(readFileSync(file)).length : statSync(file).size;
      expect(size).toBeLessThanOrEqual(600);
    }
  });

  it('keeps observability.logRotation.maxFiles plain copies when compressAged is false', async () => {
    const d = await start(
      { observability: { logRotation: { maxFiles: 1, compressAged: false } } },
      { configAuditMaxBytes: 300 },
    );
    for (const value of [1, 2, 3, 4, 5, 6])
      await d.call('config.set', { section: 'graph', key: 'defaultConcurrency', value });
    await d.daemon.stop();

    const names = readdirSync(join(d.dataDir, 'logs')).filter((name) => name.startsWith('config-audit'));
    expect(names.sort()).toEqual(['config-audit.jsonl', 'config-audit.jsonl.1']);
    const kept = [...readLines(`${auditFile(d.dataDir)}.1`), ...readLines(auditFile(d.dataDir))];
    // The newest lines survive, in order, ending with the last write.
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.at(-1)).toMatchObject({ method: 'config.set', outcome: 'success' });
    expect(kept.every((line) => line.method === 'config.set')).toBe(true);
  });
});
