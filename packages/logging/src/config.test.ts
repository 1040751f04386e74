import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { daemonLoggingSchema, logRotationSchema, resolveDaemonLogOptions } from './config.js';

describe('daemonLoggingSchema', () => {
  it('fills the contract defaults for an empty daemon section', () => {
    expect(daemonLoggingSchema.parse({})).toEqual({
      logLevels: {},
      logging: { maxSize: '10m', maxFiles: 5 },
    });
  });

  it('accepts per-module levels and tracing settings', () => {
    const parsed = daemonLoggingSchema.parse({
      logLevels: { agent: 'debug', memory: 'trace', customModule: 'fatal' },
      logging: {
        filePath: '/var/log/agentd.log',
        maxSize: '20m',
        tracing: { outputDir: 'traces', maxSize: '5m', maxFiles: 3 },
      },
    });
    expect(parsed.logLevels).toEqual({ agent: 'debug', memory: 'trace', customModule: 'fatal' });
    expect(parsed.logging.tracing).toEqual({ outputDir: 'traces', maxSize: '5m', maxFiles: 3 });
  });

  it('rejects audit and unknown levels, bad sizes and negative maxFiles', () => {
    expect(daemonLoggingSchema.safeParse({ logLevels: { agent: 'audit' } }).success).toBe(false);
    expect(daemonLoggingSchema.safeParse({ logLevels: { agent: 'verbose' } }).success).toBe(false);
    expect(daemonLoggingSchema.safeParse({ logging: { maxSize: 'huge' } }).success).toBe(false);
    expect(daemonLoggingSchema.safeParse({ logging: { maxFiles: -1 } }).success).toBe(false);
    expect(daemonLoggingSchema.safeParse({ logging: { tracing: { maxSize: '5x' } } }).success).toBe(false);
  });
});

describe('logRotationSchema', () => {
  it('fills the contract defaults', () => {
    expect(logRotationSchema.parse({})).toEqual({
      maxSizeBytes: 52_428_800,
      maxFiles: 5,
      maxAgeDays: 30,
      compressAged: true,
    });
  });
});

describe('resolveDaemonLogOptions', () => {
  it('puts the daemon log in <dataDir>/logs and lets logRotation govern the sweep', () => {
    const resolved = resolveDaemonLogOptions({
      dataDir: '/srv/agentd',
      daemon: daemonLoggingSchema.parse({ logging: { maxSize: '1m', maxFiles: 9 } }),
      logRotation: logRotationSchema.parse({ maxFiles: 3, maxAgeDays: 7, compressAged: false }),
    });
    expect(resolved).toEqual({
      file: {
        filePath: join('/srv/agentd', 'logs', 'agentd.log'),
        maxSizeBytes: 1024 * 1024,
        maxFiles: 9,
        compress: false,
      },
      sweep: { dir: join('/srv/agentd', 'logs'), maxFiles: 3, maxAgeDays: 7, compressAged: false },
    });
  });

  it('uses logRotation defaults when absent and honours daemon.logging.filePath', () => {
    const resolved = resolveDaemonLogOptions({
      dataDir: 'data',
      daemon: daemonLoggingSchema.parse({ logging: { filePath: '/var/log/agentd/daemon.log' } }),
    });
    expect(resolved.file).toEqual({
      filePath: '/var/log/agentd/daemon.log',
      maxSizeBytes: 10 * 1024 * 1024,
      maxFiles: 5,
      compress: true,
    });
    expect(resolved.sweep).toEqual({
      dir: '/var/log/agentd',
      maxFiles: 5,
      maxAgeDays: 30,
      compressAged: true,
    });
  });
});
