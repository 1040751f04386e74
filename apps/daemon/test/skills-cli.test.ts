import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { listenLocal } from '../../../packages/channels/test/fake-server.js';
import {
  ADMIN_TOKEN,
  cliNodeArgs,
  daemonPool,
  eventually,
  rpcClient,
  rpcFailure,
  skillTarball,
} from './helpers.js';

const run = promisify(execFile);
const pool = daemonPool('agentd-skills-cli-');
afterEach(() => pool.cleanup());

/** A gzip tarball of one skill folder, served by a fake registry on a real socket. */
async function startRegistry(work: string): Promise<string> {
  const archive = await skillTarball(
    await mkdtemp(join(work, 'pack-')),
    'mail',
    '---\nname: mail\ndescription: Sends mail.\nversion: 0.3.0\ntools: []\n---\nSend it.\n',
  );
  const registry = await listenLocal((req, res) => {
    if (req.url === '/skills/mail/latest.tar.gz') res.writeHead(200).end(archive);
    else res.writeHead(404).end();
  });
  return `${pool.closeAfter(registry).url}/skills`;
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
