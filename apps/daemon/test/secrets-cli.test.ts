import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { openSecretsStore } from '@agentd/secrets';
import { afterEach, describe, expect, it } from 'vitest';
import { cliNodeArgs, daemonPool } from './helpers.js';

const pool = daemonPool('agentd-secrets-cli-');
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await pool.cleanup();
});

const newKey = () => randomBytes(32).toString('hex');

/** `agentd secrets <args>` as a real process, `input` on its stdin. */
function cli(args: string[], env: NodeJS.ProcessEnv, input: string) {
  const child = spawn(process.execPath, [...cliNodeArgs, 'secrets', ...args], {
    env: { ...process.env, AGENTD_MASTER_KEY: undefined, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  const seen: Array<{ text: string; resolve: () => void }> = [];
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
    for (const waiter of seen.filter((entry) => stderr.includes(entry.text))) waiter.resolve();
  });
  child.stdin.end(input);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    /** Resolves once stderr contains `text`. */
    said: (text: string) =>
      new Promise<void>((resolve) => {
        if (stderr.includes(text)) resolve();
        else seen.push({ text, resolve });
      }),
    done: async () => ({ code: await exited, stdout, stderr }),
  };
}

/** The values of `names` under `key`, or `undefined` when the key does not open the store. */
async function readAllUnder(dataDir: string, key: string, names: string[]) {
  const store = await openSecretsStore({ dataDir, masterKey: key }).catch(() => undefined);
  if (!store) return undefined;
  try {
    const values = new Map<string, string | undefined>();
    for (const name of names) values.set(name, await store.get(name));
    return values;
  } finally {
    await store.close();
  }
}

describe('agentd secrets', () => {
  it('sets from stdin, lists names only, rotates the key and refuses to rotate under a running daemon', async () => {
    const dataDir = pool.tempDir();
    const key = newKey();
    const value = `cli-value-${randomBytes(8).toString('hex')}`;
    const set = await cli(
      ['set', 'CLI_SECRET', '--data-dir', dataDir],
      { AGENTD_MASTER_KEY: key },
      `${value}\n`,
    ).done();
    expect(set).toMatchObject({ code: 0 });
    expect(set.stderr).toContain('CLI_SECRET stored (encrypted in secrets.db)');

    const list = await cli(
      ['list', '--data-dir', dataDir, '--filter', 'CLI_*'],
      { AGENTD_MASTER_KEY: key },
      '',
    ).done();
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toMatchObject({
      secrets: [{ name: 'CLI_SECRET' }],
      storage: 'encrypted',
    });
    expect(list.stdout + list.stderr).not.toContain(value);

    const next = newKey();
    const rotated = await cli(['rotate-key', '--data-dir', dataDir], { AGENTD_MASTER_KEY: key }, next).done();
    expect(rotated.code).toBe(0);
    expect(rotated.stderr).toContain('1 secrets re-encrypted under the new key');
    expect(await readAllUnder(dataDir, key, ['CLI_SECRET'])).toBeUndefined();
    expect((await readAllUnder(dataDir, next, ['CLI_SECRET']))?.get('CLI_SECRET')).toBe(value);

    await pool.start(dataDir, { env: { AGENTD_MASTER_KEY: next } });
    const locked = await cli(
      ['rotate-key', '--data-dir', dataDir],
      { AGENTD_MASTER_KEY: next },
      newKey(),
    ).done();
    expect(locked.code).toBe(1);
    expect(locked.stderr).toMatch(/in use|locked/i);

    const usage = await cli(['set', 'lower', '--data-dir', dataDir], { AGENTD_MASTER_KEY: next }, 'v').done();
    expect(usage.code).toBe(2);
    // Each CLI run loads TypeScript through tsx: slow on a loaded machine.
  }, 120_000);

  it('leaves every secret readable under exactly one of the two keys when rotate-key is killed (kill -9)', async () => {
    const dataDir = pool.tempDir();
    let current = newKey();
    const values = new Map(
      Array.from({ length: 300 }, (_, i) => [`SECRET_${i}`, `value-${i}-${randomBytes(6).toString('hex')}`]),
    );
    const seed = await openSecretsStore({ dataDir, masterKey: current });
    for (const [name, value] of values) await seed.set(name, value);
    await seed.close();
    const names = [...values.keys()];

    // One whole rotation first, to learn how long the transaction takes on this machine.
    const calibration = newKey();
    const timed = cli(['rotate-key', '--data-dir', dataDir], { AGENTD_MASTER_KEY: current }, calibration);
    await timed.said('rotating');
    const began = performance.now();
    await timed.said('re-encrypted');
    const rotationMs = performance.now() - began;
    expect((await timed.done()).code).toBe(0);
    current = calibration;

    const outcomes: string[] = [];
    for (let round = 0; round < 5; round++) {
      const next = newKey();
      const run = cli(['rotate-key', '--data-dir', dataDir], { AGENTD_MASTER_KEY: current }, next);
      await run.said('rotating');
      // A random point from the start of the transaction to well past its end.
      await new Promise((resolve) => setTimeout(resolve, randomInt(0, Math.ceil(rotationMs * 2) + 1)));
      run.child.kill('SIGKILL');
      await run.done();

      const underOld = await readAllUnder(dataDir, current, names);
      const underNew = await readAllUnder(dataDir, next, names);
      expect([underOld, underNew].filter((found) => found !== undefined)).toHaveLength(1);
      const readable = underOld ?? underNew;
      expect(readable).toEqual(values);
      outcomes.push(underOld ? 'old' : 'new');
      current = underOld ? current : next;
    }
    // Each round ended wholly under one key; which one depends on where the kill landed.
    expect(outcomes).toHaveLength(5);
  }, 180_000);
});
