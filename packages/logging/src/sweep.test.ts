import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LoggingError } from './errors.js';
import { temporaryDirectory } from './internal/test-support.js';
import { type SweepOptions, type SweepResult, sweepLogs } from './sweep.js';

const NOW = Date.parse('2025-06-30T12:00:00Z');
const DAY = 24 * 60 * 60 * 1000;

let directory: ReturnType<typeof temporaryDirectory>;
let logs: string;

beforeEach(() => {
  directory = temporaryDirectory('sweep');
  logs = join(directory.path, 'logs');
  mkdirSync(logs);
});
afterEach(() => directory.remove());

/** Writes a file whose modification time is `ageDays` before NOW. */
function put(name: string, content: string | Buffer, ageDays: number): string {
  const path = join(logs, name);
  writeFileSync(path, content);
  const when = new Date(NOW - ageDays * DAY);
  utimesSync(path, when, when);
  return path;
}

/** Sweeps the test's log directory as of NOW with the given options. */
function sweepAtNow(options: Omit<SweepOptions, 'dir' | 'now'> = {}): Promise<SweepResult> {
  return sweepLogs({ dir: logs, now: () => NOW, ...options });
}

function names(): string[] {
  return readdirSync(logs).sort();
}

describe('sweepLogs', () => {
  it('deletes rotated copies older than maxAgeDays and never touches the live file', async () => {
    const live = put('agentd.log', 'live\n', 400);
    put('agentd.log.1.gz', gzipSync('one\n'), 1);
    put('agentd.log.2.gz', gzipSync('two\n'), 29);
    put('agentd.log.3.gz', gzipSync('three\n'), 31);
    const result = await sweepAtNow({ maxFiles: 5, maxAgeDays: 30, compressAged: true });
    expect(names()).toEqual(['agentd.log', 'agentd.log.1.gz', 'agentd.log.2.gz']);
    expect(result.deleted).toEqual([{ path: join(logs, 'agentd.log.3.gz'), reason: 'age' }]);
    expect(readFileSync(live, 'utf8')).toBe('live\n');
    expect(statSync(live).mtimeMs).toBe(NOW - 400 * DAY);
  });

  it('keeps at most maxFiles copies per stream, the lowest numbers', async () => {
    put('agentd.log', 'live', 0);
    for (let index = 1; index <= 7; index++) put(`agentd.log.${index}.gz`, gzipSync(`a${index}`), index / 10);
    for (let index = 1; index <= 3; index++) put(`cache-trace.jsonl.${index}.gz`, gzipSync(`c${index}`), 0);
    const result = await sweepAtNow({ maxFiles: 4, maxAgeDays: 30, compressAged: false });
    expect(names()).toEqual([
      'agentd.log',
      'agentd.log.1.gz',
      'agentd.log.2.gz',
      'agentd.log.3.gz',
      'agentd.log.4.gz',
      'cache-trace.jsonl.1.gz',
      'cache-trace.jsonl.2.gz',
      'cache-trace.jsonl.3.gz',
    ]);
    expect(result.deleted.map((entry) => [entry.path.slice(logs.length + 1), entry.reason])).toEqual([
      ['agentd.log.5.gz', 'count'],
      ['agentd.log.6.gz', 'count'],
      ['agentd.log.7.gz', 'count'],
    ]);
    expect(result.kept).toHaveLength(7);
  });

  it('gzips plain rotated copies, readable with zlib and keeping their modification time', async () => {
    put('config-audit.jsonl', 'live audit\n', 0);
    put('config-audit.jsonl.1', 'first rotated\n', 2);
    put('config-audit.jsonl.2', 'second rotated\n', 3);
    const result = await sweepAtNow();
    expect(names()).toEqual(['config-audit.jsonl', 'config-audit.jsonl.1.gz', 'config-audit.jsonl.2.gz']);
    expect(result.compressed).toEqual([
      join(logs, 'config-audit.jsonl.1'),
      join(logs, 'config-audit.jsonl.2'),
    ]);
    expect(gunzipSync(readFileSync(join(logs, 'config-audit.jsonl.1.gz'))).toString()).toBe(
      'first rotated\n',
    );
    expect(statSync(join(logs, 'config-audit.jsonl.2.gz')).mtimeMs).toBe(NOW - 3 * DAY);
    expect(readFileSync(join(logs, 'config-audit.jsonl'), 'utf8')).toBe('live audit\n');
  });

  it('leaves plain copies alone when compressAged is false and age rules off with maxAgeDays 0', async () => {
    put('agentd.log.1', 'old', 900);
    const result = await sweepAtNow({ maxAgeDays: 0, compressAged: false });
    expect(names()).toEqual(['agentd.log.1']);
    expect(result).toEqual({ deleted: [], compressed: [], kept: [join(logs, 'agentd.log.1')], errors: [] });
  });

  it('drops a plain copy whose gzipped twin exists', async () => {
    put('agentd.log.1', 'same', 0);
    put('agentd.log.1.gz', gzipSync('same'), 0);
    const result = await sweepAtNow();
    expect(names()).toEqual(['agentd.log.1.gz']);
    expect(result.deleted).toEqual([{ path: join(logs, 'agentd.log.1'), reason: 'duplicate' }]);
  });

  it('ignores live files, dated files, in-flight rotations and temporary files', async () => {
    const untouched = [
      'agentd.log',
      '2025-01-01.jsonl',
      'agentd.log.rotating-12-1700000000000-1',
      'agentd.log.1.gz.tmp',
      'notes.txt',
    ];
    for (const name of untouched) put(name, name, 365);
    mkdirSync(join(logs, 'trajectories.1'));
    const result = await sweepAtNow({ maxFiles: 0, maxAgeDays: 1 });
    expect(names()).toEqual([...untouched, 'trajectories.1'].sort());
    expect(result.deleted).toEqual([]);
  });

  it('returns an empty result for a missing directory', async () => {
    const result = await sweepLogs({ dir: join(directory.path, 'absent') });
    expect(result).toEqual({ deleted: [], compressed: [], kept: [], errors: [] });
  });

  it('rejects invalid options and unreadable directories with LoggingError codes', async () => {
    await expect(sweepLogs({ dir: logs, maxFiles: -1 })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    const file = put('plain-file', 'x', 0);
    await expect(sweepLogs({ dir: file })).rejects.toBeInstanceOf(LoggingError);
    await expect(sweepLogs({ dir: file })).rejects.toMatchObject({ code: 'SWEEP_FAILED' });
    expect(existsSync(file)).toBe(true);
  });
});
