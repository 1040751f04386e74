import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { orchestrateFixture } from '../test/helpers.js';
import {
  type CapabilitySocket,
  matchesPattern,
  openCapabilitySocket,
  orchestrateSectionSchema,
  SOCKET_ERRORS,
} from './index.js';

let fixture: Awaited<ReturnType<typeof orchestrateFixture>>;
let socket: CapabilitySocket | undefined;
let dir: string | undefined;
afterEach(async () => {
  await socket?.close();
  socket = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  await fixture?.cleanup();
});

/** Sends one line to the socket and answers the reply line. */
function send(path: string, message: unknown): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const client = connect(path);
    let buffer = '';
    client.setEncoding('utf8');
    client.on('error', reject);
    client.on('data', (chunk) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      client.end();
      resolve(JSON.parse(buffer.slice(0, end)));
    });
    client.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  });
}

const invoke = (lease: string, tool: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'tool.invoke',
  params: { lease, tool, args },
});

async function openFor(leaseId: string) {
  dir = mkdtempSync(join(tmpdir(), 'agentd-orch-sock-'));
  const path = join(dir, 'orch.sock');
  socket = await openCapabilitySocket({
    socketPath: path,
    leaseId,
    validate: (secret) => fixture.autonomy.leases.validate(secret),
    denylist: ['subagent_spawn'],
    mayCall: () => true,
    hasTool: () => true,
    invokeTool: async (call) => ({ ok: true, value: { as: call.agentId } }),
    workspace: fixture.workspace,
    bwrapPath: 'bwrap',
    signal: new AbortController().signal,
  });
  return path;
}

describe('capability socket', () => {
  it('is owner-only, answers a valid lease, and refuses it once revoked', async () => {
    fixture = await orchestrateFixture();
    const minted = await fixture.autonomy.mintChildLease(fixture.run.runId, {
      capabilities: ['orchestrate', 'echo'],
    });
    const path = await openFor(minted.lease.leaseId);
    expect(statSync(path).mode & 0o777).toBe(0o600);

    expect(await send(path, invoke(minted.secret, 'echo'))).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: { as: 'default' },
    });
    await fixture.autonomy.revoke({ leaseId: minted.lease.leaseId });
    const refused = await send(path, invoke(minted.secret, 'echo'));
    expect(refused.error).toMatchObject({ code: SOCKET_ERRORS.leaseInvalid, data: { reason: 'revoked' } });
    expect(socket?.tallies()).toEqual(
      expect.arrayContaining([
        { tool: 'echo', capability: 'echo', decision: 'allowed', count: 1 },
        { tool: 'echo', capability: 'echo', decision: 'lease_invalid', count: 1 },
      ]),
    );
  });

  it('refuses a foreign lease, an unknown one, a missing capability and bad requests', async () => {
    fixture = await orchestrateFixture();
    const own = await fixture.autonomy.mintChildLease(fixture.run.runId, { capabilities: ['echo'] });
    const other = await fixture.autonomy.spawn({ parentSessionKey: 'default:rpc:bob', task: 'other' });
    const foreign = await fixture.autonomy.mintChildLease(other.runId, {
      capabilities: ['echo', 'orchestrate'],
    });
    const path = await openFor(own.lease.leaseId);

    expect((await send(path, invoke(foreign.secret, 'echo'))).error).toMatchObject({
      code: SOCKET_ERRORS.leaseInvalid,
      data: { reason: 'foreign' },
    });
    expect((await send(path, invoke('agl_not-a-lease', 'echo'))).error).toMatchObject({
      code: SOCKET_ERRORS.leaseInvalid,
      data: { reason: 'unknown' },
    });
    // The lease holds echo only: the builtins need the orchestrate capability.
    expect((await send(path, invoke(own.secret, 'read', { path: 'x' }))).error).toMatchObject({
      code: SOCKET_ERRORS.denied,
      data: { reason: 'capability' },
    });
    expect((await send(path, 'not json')).error).toMatchObject({ code: SOCKET_ERRORS.parse });
    expect((await send(path, { jsonrpc: '2.0', id: 1, method: 'admin.config.set' })).error).toMatchObject({
      code: SOCKET_ERRORS.methodNotFound,
    });
    expect(
      (
        await send(path, {
          jsonrpc: '2.0',
          id: 2,
          method: 'tool.invoke',
          params: { lease: own.secret, tool: '../x' },
        })
      ).error,
    ).toMatchObject({ code: SOCKET_ERRORS.invalidParams, data: { field: 'params.tool' } });
  });

  it('checks the denylist after the capability', async () => {
    fixture = await orchestrateFixture();
    const minted = await fixture.autonomy.mintChildLease(fixture.run.runId, {
      capabilities: ['subagent_spawn'],
    });
    const path = await openFor(minted.lease.leaseId);
    expect((await send(path, invoke(minted.secret, 'subagent_spawn'))).error).toMatchObject({
      code: SOCKET_ERRORS.denied,
      data: { reason: 'denylist' },
    });
  });
});

describe('matchesPattern', () => {
  it('matches names, prefixes, suffixes and infixes', () => {
    expect(matchesPattern(['orchestrate'], 'orchestrate')).toBe(true);
    expect(matchesPattern(['admin*'], 'admin_tokens')).toBe(true);
    expect(matchesPattern(['*login*'], 'browser_login_form')).toBe(true);
    expect(matchesPattern(['*_secret'], 'read_secret')).toBe(true);
    expect(matchesPattern(['admin*', '*login*'], 'read')).toBe(false);
  });

  it('takes the same globs as every tool list: one-character and inner wildcards', () => {
    expect(matchesPattern(['file_?elete'], 'file_delete')).toBe(true);
    expect(matchesPattern(['browser_*_form'], 'browser_login_form')).toBe(true);
    expect(matchesPattern(['browser_*_form'], 'browser_login')).toBe(false);
  });

  it('refuses a denylist pattern outside the glob syntax when the config is read, naming the field', () => {
    const parsed = orchestrateSectionSchema.safeParse({ toolDenylist: ['admin*', 'rm -rf'] });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['toolDenylist.1']);
  });
});
