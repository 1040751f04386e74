import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isTerminalError } from './errors.js';
import type { TerminalServiceOptions } from './options.js';
import { createTerminalService, type TerminalService } from './terminal-service.js';

let dir: string;
let service: TerminalService | undefined;
let events: Array<{ name: string; payload: Record<string, unknown> }>;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'agentd-term-')));
  events = [];
});
afterEach(async () => {
  await service?.shutdown();
  service = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function start(options: Partial<TerminalServiceOptions> = {}): TerminalService {
  service = createTerminalService({
    cwd: async () => dir,
    events: { emit: (name, payload) => events.push({ name, payload }) },
    baseEnv: { ...process.env, AGENTD_ADMIN_TOKEN: 'do-not-leak-0123456789' },
    killGraceMs: 300,
    ...options,
  });
  return service;
}

const bash = { command: 'bash', args: ['--norc', '--noprofile', '-i'] };

/** Pids of live processes in process group `pgid` (zombies count as gone). */
function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') members.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return members;
}

async function rejection(call: Promise<unknown>) {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isTerminalError(error)) throw new Error(`expected a TerminalError, got ${String(error)}`);
  return error;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createTerminalService', () => {
  it('types a command into bash and reads its output back from the screen, in the agent directory', async () => {
    const terminal = start();
    const { sessionId } = await terminal.open('a1', bash, { sessionKey: 'default:rpc:ada' });
    await terminal.wait('a1', sessionId, { quietMs: 200 });
    await terminal.send('a1', sessionId, {
      text: 'echo "sum=$((6*7))"; pwd; echo "token=${AGENTD_ADMIN_TOKEN:-none}"',
      enter: true,
    });
    const screen = await terminal.wait('a1', sessionId, { quietMs: 300 });
    expect(screen.quiet).toBe(true);
    expect(screen.text).toContain('sum=42');
    expect(screen.text).toContain(`\n${dir}\n`);
    expect(screen.text).toContain('token=none');
    expect(screen.cols).toBe(120);
    expect(events).toEqual([
      {
        name: 'terminal.drive_promoted',
        payload: { agentId: 'a1', sessionKey: 'default:rpc:ada', sessionId, taskSent: true },
      },
    ]);
    // Another agent cannot see the drive.
    expect((await rejection(terminal.read('a2', sessionId))).code).toBe('SESSION_NOT_FOUND');
    expect(terminal.list('a1')).toMatchObject([{ sessionId, command: 'bash', interactions: 3 }]);
    expect(await terminal.close('a1', sessionId)).toMatchObject({ sessionId, closed: true });
    expect(terminal.list('a1')).toEqual([]);
  });

  it('drives node -i: an expression, then a key chord, then the program exits', async () => {
    const terminal = start();
    const { sessionId } = await terminal.open('a1', {
      command: process.execPath,
      args: ['-i'],
      input: '6 * 7\r',
    });
    const screen = await terminal.wait('a1', sessionId, { quietMs: 400, timeoutMs: 10_000 });
    // Typed before the REPL is up, the input may be echoed twice (by the tty, then the REPL).
    expect(screen.text).toMatch(/^42$/m);
    await terminal.send('a1', sessionId, { text: '.exit', keys: ['Enter'] });
    const ended = await terminal.wait('a1', sessionId, { quietMs: 5000, timeoutMs: 10_000 });
    expect(ended.exit).toEqual({ exitCode: 0 });
    expect((await rejection(terminal.send('a1', sessionId, { keys: ['Hyper-X'] }))).data).toEqual({
      field: 'keys',
    });
  });

  it('evicts an idle drive with reason idle, and records that no task was ever sent', async () => {
    const terminal = start({ idleTimeoutMs: 300 });
    const { sessionId } = await terminal.open('a1', bash, { sessionKey: 's1' });
    await sleep(1200);
    const gone = await rejection(terminal.read('a1', sessionId));
    expect(gone.code).toBe('SESSION_NOT_FOUND');
    expect(gone.data).toMatchObject({ evicted: 'idle' });
    const evicted = events.find((event) => event.name === 'terminal.session_evicted');
    expect(evicted?.payload).toMatchObject({
      sessionId,
      sessionKey: 's1',
      reason: 'idle',
      wasProducing: true,
    });
    expect(evicted?.payload.idleMs).toBeGreaterThanOrEqual(300);
    expect(events.find((event) => event.name === 'terminal.drive_promoted')?.payload).toMatchObject({
      taskSent: false,
    });
  });

  it('evicts a drive past its wall clock even while the agent keeps using it', async () => {
    const terminal = start({ wallClockMs: 600 });
    const { sessionId } = await terminal.open('a1', bash);
    let error: unknown;
    for (let round = 0; round < 40 && !error; round++) {
      await sleep(50);
      error = await terminal.read('a1', sessionId).then(
        () => undefined,
        (caught: unknown) => caught,
      );
    }
    expect(isTerminalError(error, 'SESSION_NOT_FOUND')).toBe(true);
    expect(events.find((event) => event.name === 'terminal.session_evicted')?.payload).toMatchObject({
      reason: 'wall_clock',
    });
  });

  it('evicts the least recently used drive with reason max_sessions when an agent opens one too many', async () => {
    const terminal = start({ maxSessionsPerAgent: 2 });
    const first = await terminal.open('a1', bash);
    const second = await terminal.open('a1', bash);
    await terminal.read('a1', first.sessionId);
    await terminal.open('a2', bash);
    const third = await terminal.open('a1', bash);
    expect(third.evicted).toBe(second.sessionId);
    expect(
      terminal
        .list('a1')
        .map((drive) => drive.sessionId)
        .sort(),
    ).toEqual([first.sessionId, third.sessionId].sort());
    expect(
      events.filter((event) => event.name === 'terminal.session_evicted').map((event) => event.payload),
    ).toEqual([expect.objectContaining({ sessionId: second.sessionId, reason: 'max_sessions' })]);
  });

  it('evicts a drive with reason max_interactions on the call past the limit', async () => {
    const terminal = start({ maxInteractions: 2 });
    const { sessionId, pid } = await terminal.open('a1', bash);
    await terminal.read('a1', sessionId);
    await terminal.send('a1', sessionId, { keys: ['C-c'] });
    const refused = await rejection(terminal.read('a1', sessionId));
    expect(refused.code).toBe('EVICTED');
    expect(events.find((event) => event.name === 'terminal.session_evicted')?.payload).toMatchObject({
      reason: 'max_interactions',
    });
    await terminal.shutdown();
    expect(groupMembers(pid)).toEqual([]);
  });

  it('kills the whole process group at close, SIGTERM-ignoring members included', async () => {
    const terminal = start();
    const { sessionId, pid } = await terminal.open('a1', {
      command: 'bash',
      args: ['-c', "trap '' TERM HUP INT; sleep 300 & sleep 300 & echo started; wait"],
    });
    await terminal.wait('a1', sessionId, { quietMs: 300 });
    expect(groupMembers(pid).length).toBeGreaterThanOrEqual(3);
    await terminal.close('a1', sessionId);
    expect(groupMembers(pid)).toEqual([]);
  });

  it('answers SPAWN_FAILED naming the command for a program that is not there', async () => {
    const terminal = start();
    const missing = await rejection(terminal.open('a1', { command: 'no-such-program-7f3a' }));
    expect(missing.code).toBe('SPAWN_FAILED');
    expect(missing.data).toEqual({ field: 'command' });
    expect((await rejection(terminal.open('a1', { command: './nothing-here' }))).code).toBe('SPAWN_FAILED');
    expect(terminal.list('a1')).toEqual([]);
  });

  it('refuses opens once shut down or disabled', async () => {
    const terminal = start({ enabled: false });
    expect((await rejection(terminal.open('a1', bash))).code).toBe('CLOSED');
    terminal.applyConfig({ enabled: true });
    const { sessionId } = await terminal.open('a1', bash);
    await terminal.shutdown();
    expect((await rejection(terminal.read('a1', sessionId))).code).toBe('SESSION_NOT_FOUND');
    expect((await rejection(terminal.open('a1', bash))).code).toBe('CLOSED');
  });
});
