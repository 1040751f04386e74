import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { create as createTar } from 'tar';
import { stringify } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, cliNodeArgs, daemonPool, eventually, rpcClient, rpcFailure } from './helpers.js';

const run = promisify(execFile);
const pool = daemonPool('agentd-skills-cli-');
let registry: Server | undefined;

afterEach(async () => {
  await pool.cleanup();
  await new Promise((resolve) => (registry ? registry.close(resolve) : resolve(undefined)));
  registry = undefined;
});

/** A gzip tarball of one skill folder, served by a fake registry on a real socket. */
async function startRegistry(work: string): Promise<string> {
  const dir = await mkdtemp(join(work, 'pack-'));
  await mkdir(join(dir, 'mail'));
  await writeFile(
    join(dir, 'mail', 'SKILL.md'),
    '---\nname: mail\ndescription: Sends mail.\nversion: 0.3.0\ntools: []\n---\nSend it.\n',
  );
  const chunks: Buffer[] = [];
  for await (const chunk of createTar({ gzip: true, cwd: dir, portable: true }, ['mail']))
    chunks.push(chunk as Buffer);
  const archive = Buffer.concat(chunks);
  registry = createServer((req, res) => {
    if (req.url === '/skills/mail/latest.tar.gz') res.writeHead(200).end(archive);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => registry?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(registry.address() as AddressInfo).port}/skills`;
}

const cli = (...args: string[]) => run(process.execPath, [...cliNodeArgs, ...args]);

// Real processes under tsx on a loaded machine: generous time.
describe('agentd skills remove', { timeout: 120_000 }, () => {
  it('removes an imported skill from a running daemon through its config, audited, and blocks re-import until unblocked', async () => {
    const dataDir = pool.tempDir();
    const base = await startRegistry(dataDir);
    await writeFile(
      join(dataDir, 'config.yaml'),
      stringify({
        skills: { import: { registries: [{ id: 'hub', base, kind: 'tarball', trust: 'verified' }] } },
      }),
    );
    const daemon = await pool.startProcess(dataDir, { AGENTD_ADMIN_TOKEN: ADMIN_TOKEN });
    const admin = rpcClient(daemon.url);
    await admin.call('skills.import', { registry: 'hub', name: 'mail' });
    const names = async () =>
      ((await admin.call('skills.list')) as { skills: Array<{ name: string }> }).skills.map(
        (skill) => skill.name,
      );
    expect(await names()).toEqual(['mail']);

    const removed = await cli('skills', 'remove', 'mail', '--data-dir', dataDir);
    expect(removed.stderr).toContain('the running daemon was told to reload');
    await eventually(async () => ((await names()).length === 0 ? true : undefined));
    const audit = (await admin.call('obs.audit.query', { kind: 'config' })) as {
      rows: Array<{ classification: string; refs: Record<string, unknown> }>;
    };
    expect(audit.rows.filter((row) => row.refs.action === 'skill_remove')).toEqual([
      expect.objectContaining({
        classification: 'allowed',
        refs: expect.objectContaining({ skill: 'mail', registry: 'hub', reason: 'blocked' }),
      }),
    ]);
    const refused = await rpcFailure(admin.call('skills.import', { registry: 'hub', name: 'mail' }));
    expect([refused.code, refused.message]).toEqual([
      -32602,
      'Skill blocked: mail (in skills.import.blocked)',
    ]);

    await cli('skills', 'unblock', 'mail', '--data-dir', dataDir);
    await eventually(async () =>
      admin.call('skills.import', { registry: 'hub', name: 'mail' }).then(
        () => true,
        () => undefined,
      ),
    );
    expect(await names()).toEqual(['mail']);

    const usage = await cli('skills', 'remove', '../etc', '--data-dir', dataDir).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(usage).toMatchObject({ code: 2 });
  });
});
