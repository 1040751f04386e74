import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runWakeGate, type WakeGate } from './wake-gate.js';

const node = process.execPath;
const script = (source: string, extra: Partial<WakeGate> = {}): WakeGate => ({
  command: node,
  args: ['-e', source],
  ...extra,
});

let root: string;
let cwd: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'agentd-gate-'));
  cwd = join(root, 'workspaces', 'agent-1');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('runWakeGate', () => {
  it('skips when the gate prints wake false, keeping its reason', async () => {
    const result = await runWakeGate(
      script('console.log(JSON.stringify({ wake: false, reason: "inbox empty" }))'),
      {
        cwd,
      },
    );
    expect(result).toMatchObject({ outcome: 'skip', reason: 'inbox empty', toolCalls: 0 });
    expect(result.failure).toBeUndefined();
  });

  it('wakes with the message the gate prints', async () => {
    const result = await runWakeGate(
      script('process.stdout.write(JSON.stringify({ wake: true, message: "3 new mails" }))'),
      { cwd },
    );
    expect(result).toMatchObject({ outcome: 'wake', message: '3 new mails' });
  });

  it('runs in the agent workspace, created when missing, with only the minimal environment', async () => {
    process.env.AGENTD_TEST_SECRET = 'do-not-leak';
    try {
      expect(existsSync(cwd)).toBe(false);
      const result = await runWakeGate(
        script(
          'process.stdout.write(JSON.stringify({ wake: true, message: JSON.stringify({ cwd: process.cwd(), env: process.env }) }))',
        ),
        { cwd, extraEnv: { AGENTD_JOB_ID: 'job-1' } },
      );
      const seen = JSON.parse(result.message!) as { cwd: string; env: Record<string, string> };
      expect(seen.cwd).toBe(cwd);
      expect(existsSync(cwd)).toBe(true);
      expect(seen.env.AGENTD_TEST_SECRET).toBeUndefined();
      expect(seen.env.HOME).toBe(cwd);
      expect(seen.env.AGENTD_JOB_ID).toBe('job-1');
      expect(
        Object.keys(seen.env).filter((key) => !['PATH', 'HOME', 'LANG', 'AGENTD_JOB_ID'].includes(key)),
      ).toEqual([]);
    } finally {
      delete process.env.AGENTD_TEST_SECRET;
    }
  });

  it('passes arguments without a shell, so shell syntax stays literal', async () => {
    const result = await runWakeGate(
      {
        command: node,
        args: [
          '-e',
          'process.stdout.write(JSON.stringify({ wake: true, message: process.argv[1] }))',
          '$(touch pwned); *',
        ],
      },
      { cwd },
    );
    expect(result.message).toBe('$(touch pwned); *');
    expect(existsSync(join(cwd, 'pwned'))).toBe(false);
  });

  it('fails open as a crash when the gate exits non-zero', async () => {
    const result = await runWakeGate(script('process.exit(3)'), { cwd });
    expect(result).toMatchObject({ outcome: 'failed-open', failure: 'crash', detail: 'exit code 3' });
  });

  it('fails open as a crash when the command cannot be started', async () => {
    const result = await runWakeGate({ command: join(root, 'no-such-gate') }, { cwd });
    expect(result).toMatchObject({ outcome: 'failed-open', failure: 'crash' });
    expect(result.detail).toContain('ENOENT');
  });

  it('fails open on timeout and kills the gate with everything it started', async () => {
    const marker = join(root, 'late-marker');
    const result = await runWakeGate(
      {
        command: node,
        args: [
          '-e',
          "require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => require(\\'node:fs\\').writeFileSync(process.argv[1], \\'x\\'), 1500)', process.argv[1]], { stdio: 'ignore' }); setTimeout(() => {}, 60000)",
          marker,
        ],
        timeoutMs: 300,
      },
      { cwd },
    );
    expect(result.detail).toBe('no decision within 300 ms');
    expect(result).toMatchObject({ outcome: 'failed-open', failure: 'timeout' });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(existsSync(marker)).toBe(false);
  });

  it('fails open when the output exceeds the cap', async () => {
    const result = await runWakeGate(
      script('process.stdout.write("x".repeat(5000)); setTimeout(() => {}, 60000)'),
      {
        cwd,
        maxOutputBytes: 1024,
      },
    );
    expect(result).toMatchObject({ outcome: 'failed-open', failure: 'output-cap' });
  });

  it('counts stderr toward the cap', async () => {
    const result = await runWakeGate(
      script('process.stderr.write("e".repeat(4096)); console.log(JSON.stringify({ wake: false }))', {
        maxOutputBytes: 1024,
      }),
      { cwd },
    );
    expect(result.failure).toBe('output-cap');
  });

  it('fails open on output that is not one JSON object of the documented shape', async () => {
    const notJson = await runWakeGate(script('console.log("sure, wake up")'), { cwd });
    expect(notJson).toMatchObject({ outcome: 'failed-open', failure: 'invalid-output' });
    const wrongShape = await runWakeGate(script('console.log(JSON.stringify({ wake: "no" }))'), { cwd });
    expect(wrongShape).toMatchObject({ outcome: 'failed-open', failure: 'invalid-output' });
    expect(wrongShape.detail).toContain('wake');
    const twoObjects = await runWakeGate(script('console.log("{\\"wake\\":false}\\n{\\"wake\\":true}")'), {
      cwd,
    });
    expect(twoObjects.failure).toBe('invalid-output');
  });

  it('fails open as a crash when aborted', async () => {
    const controller = new AbortController();
    const pending = runWakeGate(script('setTimeout(() => {}, 60000)'), { cwd, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toMatchObject({ outcome: 'failed-open', failure: 'crash', detail: 'aborted' });
  });
});
