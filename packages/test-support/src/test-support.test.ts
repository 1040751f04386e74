import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { alive, deferred, eventually, pidsOf, recordingLogger, tempDirs, turnRunner } from './index.js';

describe('recordingLogger', () => {
  it('keeps every call with its level, fields and message, in order', () => {
    const logger = recordingLogger();
    logger.info({ id: 1 }, 'started');
    logger.warn({ hint: 'h', errorKind: 'internal' });
    logger.debug({}, 'tick');
    logger.error({ hint: 'x', errorKind: 'network' }, 'failed');
    expect(logger.entries).toEqual([
      { level: 'info', fields: { id: 1 }, message: 'started' },
      { level: 'warn', fields: { hint: 'h', errorKind: 'internal' }, message: undefined },
      { level: 'debug', fields: {}, message: 'tick' },
      { level: 'error', fields: { hint: 'x', errorKind: 'network' }, message: 'failed' },
    ]);
  });
});

describe('deferred', () => {
  it('resolves with the value the test gives', async () => {
    const pending = deferred<number>();
    pending.resolve(7);
    await expect(pending.promise).resolves.toBe(7);
  });

  it('rejects with the error the test gives', async () => {
    const pending = deferred<number>();
    const error = new Error('stopped');
    pending.reject(error);
    await expect(pending.promise).rejects.toBe(error);
  });
});

describe('tempDirs', () => {
  it('makes distinct prefixed directories and removes them all with their contents', () => {
    const dirs = tempDirs('agentd-support-');
    const first = dirs.make();
    const second = dirs.make();
    expect(first).not.toBe(second);
    expect(basename(first).startsWith('agentd-support-')).toBe(true);
    writeFileSync(join(first, 'file.txt'), 'x');
    dirs.removeAll();
    expect(existsSync(first)).toBe(false);
    expect(existsSync(second)).toBe(false);
    dirs.removeAll();
  });
});

describe('eventually', () => {
  it('polls until the check answers a value, and answers it', async () => {
    let calls = 0;
    const value = await eventually(() => (++calls === 3 ? 'ready' : undefined), 5000, 1);
    expect(value).toBe('ready');
    expect(calls).toBe(3);
  });

  it('rejects once the time is up', async () => {
    await expect(eventually(async () => undefined, 30, 5)).rejects.toThrow('condition not met in time');
  });
});

describe('alive', () => {
  it('tells a live process from a pid that is not running', () => {
    expect(alive(process.pid)).toBe(true);
    // Above the kernel's pid_max (4,194,304 at most): never a running process.
    expect(alive(2 ** 22 + 1)).toBe(false);
  });

  it.runIf(process.platform === 'linux')('counts a zombie nobody reaps as gone', async () => {
    // The shell starts a short child, prints its pid, then becomes `sleep`, which never reaps it.
    const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const zombie = Number(
        await new Promise<string>((resolve) => parent.stdout.once('data', (d) => resolve(String(d)))),
      );
      await eventually(() =>
        readFileSync(`/proc/${zombie}/stat`, 'utf8').includes(') Z ') ? true : undefined,
      );
      expect(alive(zombie)).toBe(false);
      expect(alive(parent.pid ?? 0)).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});

describe('pidsOf', () => {
  it('finds a running process by program and first argument, and not once it has ended', async () => {
    const child = spawn('sleep', ['4711.5'], { stdio: 'ignore' });
    try {
      await eventually(() => (pidsOf('sleep', '4711.5').length > 0 ? true : undefined));
      expect(pidsOf('sleep', '4711.5')).toEqual([child.pid]);
      expect(pidsOf('sleep', '4711.6')).toEqual([]);
    } finally {
      child.kill();
    }
    await eventually(() => (pidsOf('sleep', '4711.5').length === 0 ? true : undefined));
  });
});

describe('turnRunner', () => {
  it("answers each turn with what answer returns, the request's session key or the fallback", async () => {
    const seen: string[] = [];
    const runner = turnRunner(async (request) => {
      seen.push(request.message);
      return `re: ${request.message}`;
    }, 'fallback');
    expect(await runner.runTurn({ message: 'hi', sessionKey: 's1' })).toEqual({
      response: 're: hi',
      tokensUsed: { input: 1, output: 1, total: 2 },
      finishReason: 'stop',
      sessionKey: 's1',
    });
    expect((await runner.runTurn({ message: 'again' })).sessionKey).toBe('fallback');
    expect(seen).toEqual(['hi', 'again']);
  });
});
