import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { ErrorKind as ContractErrorKind, Logger as ContractLogger } from '@agentd/contracts';
import { pino } from 'pino';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { LoggingError } from './errors.js';
import { type AgentdLogger, ERROR_KINDS, type Logger } from './fields.js';
import { captureLines, temporaryDirectory } from './internal/test-support.js';
import { createLogger } from './logger.js';
import { noopLogger } from './noop-logger.js';
import { runWithTrace } from './trace.js';

const problem = { hint: 'check the upstream', errorKind: 'network' } as const;

function setup(options: Parameters<typeof createLogger>[0] = {}) {
  const output = captureLines();
  const root = createLogger({ now: () => 1_700_000_000_000, ...options, destination: output });
  return { root, output };
}

describe('createLogger', () => {
  it('writes the standard fields with numeric levels, epoch time, pid and hostname', () => {
    const { root, output } = setup();
    root.info({ agentId: 'a1' }, 'hello');
    expect(output.lines).toHaveLength(1);
    const line = output.lines[0]!;
    expect(line).toMatchObject({ level: 30, time: 1_700_000_000_000, msg: 'hello', agentId: 'a1' });
    expect(line.pid).toBe(process.pid);
    expect(typeof line.hostname).toBe('string');
    expect(line.module).toBe('daemon');
  });

  it('writes every level at its contract value, audit at 35', () => {
    const { root, output } = setup({ level: 'trace' });
    root.trace('t');
    root.debug('d');
    root.info('i');
    root.audit({ clientId: 'c1' }, 'a');
    root.warn(problem, 'w');
    root.error(problem, 'e');
    root.fatal(problem, 'f');
    expect(output.lines.map((line) => [line.msg, line.level])).toEqual([
      ['t', 10],
      ['d', 20],
      ['i', 30],
      ['a', 35],
      ['w', 40],
      ['e', 50],
      ['f', 60],
    ]);
  });

  it('filters audit by its numeric value like any level', () => {
    const { root, output } = setup({ level: 'info' });
    root.audit({}, 'kept at info');
    root.setLevel('daemon', 'warn');
    root.audit({}, 'dropped at warn');
    expect(output.lines.map((line) => line.msg)).toEqual(['kept at info']);
  });

  it('adds base fields such as instanceId to every line', () => {
    const { root, output } = setup({ base: { instanceId: 'i-1' } });
    root.module('agent').info('x');
    expect(output.lines[0]).toMatchObject({ instanceId: 'i-1', module: 'agent' });
  });

  it('writes an Error under err with type, message and stack and uses its message as msg', () => {
    const { root, output } = setup();
    const failure = new Error('socket hang up', { cause: new Error('ECONNRESET') });
    root.error({ err: failure, ...problem });
    const line = output.lines[0]!;
    expect(line.msg).toBe('socket hang up');
    const err = line.err as Record<string, unknown>;
    expect(err.type).toBe('Error');
    expect(err.message).toContain('socket hang up');
    expect(err.message).toContain('ECONNRESET');
    expect(String(err.stack)).toContain('socket hang up');
    expect(line).not.toHaveProperty('error');
  });

  it('copies every file line to stdout with alsoStdout', async () => {
    const directory = temporaryDirectory('stdout');
    try {
      const script = join(directory.path, 'both.mts');
      const filePath = join(directory.path, 'logs', 'agentd.log');
      const entry = fileURLToPath(new URL('./index.ts', import.meta.url));
      writeFileSync(
        script,
        `import { createLogger } from ${JSON.stringify(entry)};
const root = createLogger({ destination: { filePath: process.argv[2] }, alsoStdout: true });
root.module('agent').info({ token: 'sk-live-stdout' }, 'to both');
await root.close();
`,
      );
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script, filePath], {
        cwd: fileURLToPath(new URL('..', import.meta.url)),
      });
      const fromFile = readFileSync(filePath, 'utf8');
      expect(stdout).toBe(fromFile);
      expect(JSON.parse(fromFile)).toMatchObject({ module: 'agent', msg: 'to both', token: '[REDACTED]' });
    } finally {
      directory.remove();
    }
  });

  it('closes within closeTimeoutMs when the destination never finishes flushing', async () => {
    const lines: string[] = [];
    // A destination whose flush never calls back, like a pipe nobody reads.
    const stuck = { write: (line: string) => void lines.push(line), flush: () => undefined };
    const root = createLogger({ destination: stuck, closeTimeoutMs: 50 });
    root.info('last line');
    await root.close();
    expect(lines).toHaveLength(1);
  });

  it('exits cleanly when stdout is closed by its reader before the last lines are written', async () => {
    const directory = temporaryDirectory('epipe');
    let child: ChildProcess | undefined;
    try {
      const script = join(directory.path, 'epipe.mts');
      const entry = fileURLToPath(new URL('./index.ts', import.meta.url));
      // The child waits until its stdout reader is gone, then logs, closes and exits the way the
      // CLI does (process.exit, which runs exit hooks such as pino's stdout flush).
      writeFileSync(
        script,
        `import { createLogger } from ${JSON.stringify(entry)};
const root = createLogger({ destination: { filePath: process.argv[2] }, alsoStdout: true });
process.stdin.once('data', async () => {
  process.stdin.destroy();
  for (let i = 0; i < 1000; i += 1) root.info({ i }, 'after the reader left');
  await root.close();
  process.stderr.write('closed', () => process.exit(0));
});
`,
      );
      const started = spawn(
        process.execPath,
        ['--import', 'tsx', script, join(directory.path, 'logs', 'agentd.log')],
        { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: ['pipe', 'pipe', 'pipe'] },
      );
      child = started;
      let stderr = '';
      started.stderr.on('data', (chunk) => {
        stderr += chunk;
      });
      const exit = new Promise<number | null>((resolve) => started.once('exit', (code) => resolve(code)));
      started.stdout.destroy();
      started.stdin.write('go\n');
      expect(await exit).toBe(0);
      expect(stderr).toBe('closed');
      expect(readFileSync(join(directory.path, 'logs', 'agentd.log'), 'utf8')).toContain('"i":999');
    } finally {
      child?.kill('SIGKILL');
      directory.remove();
    }
  });

  it('rejects invalid options with INVALID_OPTIONS', () => {
    expect(() => createLogger({ level: 'audit' as never })).toThrow(LoggingError);
    try {
      createLogger({ logLevels: { agent: 'loud' as never } });
      expect.unreachable();
    } catch (error) {
      expect((error as LoggingError).code).toBe('INVALID_OPTIONS');
    }
  });

  it('demands hint and errorKind on warn, error and fatal at compile time', () => {
    const { root, output } = setup();
    const logger: AgentdLogger = root.module('memory');
    // @ts-expect-error warn without hint and errorKind does not compile
    logger.warn({ reason: 'reranker down' }, 'fallback');
    // @ts-expect-error error without errorKind does not compile
    logger.error({ hint: 'retry later' }, 'failed');
    // @ts-expect-error fatal without hint does not compile
    logger.fatal({ errorKind: 'internal' }, 'dead');
    // @ts-expect-error a bare message is not enough for warn
    logger.warn('no fields');
    // @ts-expect-error errorKind must be one of the contract values
    logger.error({ hint: 'x', errorKind: 'disk' }, 'bad kind');
    // @ts-expect-error canonical fields keep their types
    logger.info({ durationMs: 'slow' }, 'typed');
    logger.warn(
      { hint: 'using full-text recall', errorKind: 'dependency', step: 'store' },
      'vector index down',
    );
    logger.info({ anyExtraField: { nested: true } }, 'extra fields are allowed');
    logger.info('bare message');
    expect(output.lines).toHaveLength(9);
  });

  it('still writes hint and errorKind on warn and error lines from untyped callers', () => {
    const { root, output } = setup();
    const untyped = root.module('channels') as unknown as Logger & { warn(message: string): void };
    untyped.warn('plain message');
    untyped.error(new Error('boom') as object);
    untyped.warn({ hint: 'given' }, 'partial');
    for (const line of output.lines) {
      expect(typeof line.hint).toBe('string');
      expect(line.errorKind).toBeTypeOf('string');
    }
    expect(output.lines[0]).toMatchObject({ msg: 'plain message', errorKind: 'internal' });
    expect(output.lines[1]).toMatchObject({ msg: 'boom', errorKind: 'internal' });
    expect(output.lines[2]).toMatchObject({ hint: 'given', errorKind: 'internal' });
  });
});

describe('RootLogger.module', () => {
  it('always writes the module field, on module loggers and their children', () => {
    const { root, output } = setup();
    root.module('gateway').info('a');
    root.module('gateway').child({ connectionId: 'c1' }).child({ clientId: 'k' }).info('b');
    expect(output.lines.map((line) => line.module)).toEqual(['gateway', 'gateway']);
    expect(output.lines[1]).toMatchObject({ connectionId: 'c1', clientId: 'k' });
  });

  it('returns the same logger for the same module name', () => {
    const { root } = setup();
    expect(root.module('agent')).toBe(root.module('agent'));
    expect(root.module('daemon')).toBe(root);
  });

  it('moves a child under another module when bound with module, without a duplicate key', () => {
    const { root, output } = setup({ logLevels: { memory: 'debug' } });
    const child = root.module('agent').child({ agentId: 'a1', module: 'memory' });
    child.debug('recall');
    expect(output.raw[0]!.match(/"module"/g)).toHaveLength(1);
    expect(output.lines[0]).toMatchObject({ module: 'memory', agentId: 'a1' });
    expect(child.level).toBe('debug');
  });
});

describe('RootLogger.setLevel', () => {
  it('changes a module level at once for the module and children created before the change', () => {
    const { root, output } = setup({ level: 'info' });
    const agent = root.module('agent');
    const session = agent.child({ agentId: 'a1' });
    session.debug('hidden');
    expect(session.isLevelEnabled('debug')).toBe(false);
    root.setLevel('agent', 'debug');
    session.debug('shown');
    agent.debug('shown too');
    root.module('scheduler').debug('other modules keep their level');
    expect(output.lines.map((line) => line.msg)).toEqual(['shown', 'shown too']);
    expect(session.level).toBe('debug');
    root.setLevel('agent', 'error');
    agent.warn(problem, 'hidden warn');
    agent.error(problem, 'shown error');
    expect(output.lines.map((line) => line.msg).slice(2)).toEqual(['shown error']);
  });

  it('accepts a module that does not exist yet and applies it on first use', () => {
    const { root, output } = setup();
    root.setLevel('skills', 'trace');
    root.module('skills').trace('deep');
    expect(output.lines[0]).toMatchObject({ module: 'skills', level: 10 });
  });

  it('rejects levels outside trace..fatal, including audit, with INVALID_LEVEL', () => {
    const { root } = setup();
    for (const level of ['audit', 'verbose', '', 'INFO']) {
      try {
        root.setLevel('agent', level as never);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(LoggingError);
        expect((error as LoggingError).code).toBe('INVALID_LEVEL');
      }
    }
    expect(() => root.setLevel('', 'debug')).toThrow(LoggingError);
  });

  it('refuses module names that are not module-shaped or that objects inherit, keeping no entry for them', () => {
    const { root } = setup();
    for (const module of ['__proto__', 'constructor', 'prototype', 'Has Space', 'x'.repeat(65)]) {
      expect(() => root.setLevel(module, 'debug'), module).toThrow(
        expect.objectContaining({ code: 'INVALID_LEVEL' }),
      );
    }
    expect(Object.keys(root.levels())).not.toEqual(
      expect.arrayContaining(['__proto__', 'constructor', 'prototype']),
    );
    root.setLevel('obs.reports', 'debug');
    expect(root.levels()['obs.reports']).toBe('debug');
  });
});

describe('RootLogger.levels', () => {
  it('lists the effective level of configured, overridden and used modules', () => {
    const { root } = setup({ level: 'warn', logLevels: { agent: 'debug' } });
    root.module('memory');
    root.setLevel('gateway', 'trace');
    expect(root.levels()).toEqual({ agent: 'debug', daemon: 'warn', gateway: 'trace', memory: 'warn' });
    expect(root.defaultLevel).toBe('warn');
  });
});

describe('RootLogger.resetLevels', () => {
  it('replaces configured levels and the default for existing loggers while keeping setLevel overrides', () => {
    const { root, output } = setup({ logLevels: { agent: 'debug' } });
    const agent = root.module('agent');
    const memory = root.module('memory');
    root.setLevel('gateway', 'trace');
    root.resetLevels({ memory: 'debug' }, 'warn');
    agent.info('agent info now hidden');
    memory.debug('memory debug now shown');
    root.module('gateway').trace('override kept');
    expect(output.lines.map((line) => line.msg)).toEqual(['memory debug now shown', 'override kept']);
    expect(root.levels()).toMatchObject({ agent: 'warn', memory: 'debug', gateway: 'trace', daemon: 'warn' });
  });

  it('rejects an invalid map with INVALID_LEVEL and changes nothing', () => {
    const { root } = setup({ logLevels: { agent: 'debug' } });
    expect(() => root.resetLevels({ agent: 'loud' as never })).toThrow(LoggingError);
    expect(root.levels().agent).toBe('debug');
  });
});

describe('runWithTrace with createLogger', () => {
  it('adds traceId and the bound fields to every line inside, across awaits', async () => {
    const { root, output } = setup();
    const agent = root.module('agent');
    await runWithTrace({ traceId: 't-1', connectionId: 'c-9', method: 'agent.run' }, async () => {
      agent.info('before await');
      await sleep(5);
      agent.child({ agentId: 'a' }).info('after await');
    });
    agent.info('outside');
    expect(output.lines[0]).toMatchObject({ traceId: 't-1', connectionId: 'c-9', method: 'agent.run' });
    expect(output.lines[1]).toMatchObject({ traceId: 't-1', agentId: 'a' });
    expect(output.lines[2]).not.toHaveProperty('traceId');
  });

  it('keeps two concurrent traces apart', async () => {
    const { root, output } = setup();
    const logger = root.module('gateway');
    const request = (traceId: string, delays: number[]) =>
      runWithTrace({ traceId }, async () => {
        for (const [step, delay] of delays.entries()) {
          await sleep(delay);
          logger.info({ step: String(step), reason: traceId }, 'step');
        }
      });
    await Promise.all([request('alpha', [1, 7, 2, 9]), request('beta', [4, 1, 8, 1])]);
    expect(output.lines).toHaveLength(8);
    for (const line of output.lines) expect(line.traceId).toBe(line.reason);
    expect(new Set(output.lines.map((line) => line.traceId))).toEqual(new Set(['alpha', 'beta']));
  });

  it('lets a field on the log call win over the trace context', () => {
    const { root, output } = setup();
    runWithTrace({ traceId: 'ctx', method: 'a.b' }, () => root.info({ method: 'x.y' }, 'm'));
    expect(output.lines[0]).toMatchObject({ traceId: 'ctx', method: 'x.y' });
  });
});

describe('Logger', () => {
  it('is satisfied by pino, the root logger, module loggers and noopLogger', () => {
    const { root } = setup();
    const accept = (logger: Logger): Logger => logger.child({ module: 'x' });
    const instance = pino({ level: 'silent' });
    expect(accept(instance)).toBeDefined();
    expect(accept(root)).toBeDefined();
    expect(accept(root.module('agent'))).toBeDefined();
    expect(accept(noopLogger)).toBe(noopLogger);
  });
});

describe('@agentd/contracts Logger', () => {
  it('is satisfied by pino, the root logger, module loggers and noopLogger, so packages take them as is', () => {
    const { root, output } = setup();
    const accept = (logger: ContractLogger): ContractLogger => logger;
    accept(pino({ level: 'silent' }));
    accept(root);
    accept(noopLogger);
    accept(root.module('agent')).warn(problem, 'through the contract');
    expect(output.lines[0]).toMatchObject({ module: 'agent', msg: 'through the contract', ...problem });
  });

  it('shares the error kinds: ERROR_KINDS lists exactly the contract ErrorKind', () => {
    expectTypeOf<(typeof ERROR_KINDS)[number]>().toEqualTypeOf<ContractErrorKind>();
    expect(new Set(ERROR_KINDS).size).toBe(ERROR_KINDS.length);
  });
});
