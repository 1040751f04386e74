import { describe, expect, it } from 'vitest';
import { type ErrorKind, noopLogger, type RpcLogger, type ProblemFields } from './logger.js';

/** Mirrors the shape of @agentd/logging's module logger, whose warn and error demand hint and errorKind. */
interface StrictModuleLogger {
  debug(fields: Record<string, unknown>, message?: string): void;
  info(fields: Record<string, unknown>, message?: string): void;
  warn(fields: Record<string, unknown> & { hint: string; errorKind: ErrorKind }, message?: string): void;
  error(fields: Record<string, unknown> & { hint: string; errorKind: ErrorKind }, message?: string): void;
}

describe('RpcLogger', () => {
  it('demands hint and errorKind on warn and error, and the error under err', () => {
    const lines: Array<{ level: string; fields: Record<string, unknown> }> = [];
    const logger: RpcLogger = {
      ...noopLogger,
      warn: (fields) => lines.push({ level: 'warn', fields }),
      error: (fields) => lines.push({ level: 'error', fields }),
    };
    // @ts-expect-error warn without hint and errorKind does not compile
    logger.warn({ reason: 'slow' }, 'degraded');
    // @ts-expect-error error without errorKind does not compile
    logger.error({ hint: 'retry later' }, 'failed');
    // @ts-expect-error errorKind outside the contract's list does not compile
    logger.warn({ hint: 'free disk space', errorKind: 'disk' }, 'bad kind');
    // @ts-expect-error the error goes under err, never error
    logger.error({ hint: 'check the file', errorKind: 'resource', error: new Error('x') }, 'failed');
    const problem: ProblemFields = { hint: 'check the file', errorKind: 'resource', err: new Error('boom') };
    logger.error(problem, 'failed');
    expect(lines.map((line) => line.level)).toEqual(['warn', 'error', 'warn', 'error', 'error']);
    expect(lines.at(-1)?.fields).toMatchObject({ hint: 'check the file', errorKind: 'resource' });
  });

  it('accepts a logger whose warn and error themselves require hint and errorKind', () => {
    const seen: string[] = [];
    const strict: StrictModuleLogger = {
      debug: () => {},
      info: () => {},
      warn: (fields) => seen.push(`${fields.errorKind}: ${fields.hint}`),
      error: (fields) => seen.push(`${fields.errorKind}: ${fields.hint}`),
    };
    const logger: RpcLogger = strict;
    logger.warn({ hint: 'use a local disk', errorKind: 'platform' });
    expect(seen).toEqual(['platform: use a local disk']);
  });

  it('drops everything by default', () => {
    expect(noopLogger.warn({ hint: 'none', errorKind: 'internal' })).toBeUndefined();
    expect(noopLogger.error({ hint: 'none', errorKind: 'internal' }, 'ignored')).toBeUndefined();
  });
});
