import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LoggingError } from './errors.js';
import { temporaryDirectory } from './internal/test-support.js';
import { createLogger } from './logger.js';
import { createRotatingFileStream, type RotatingFileStream } from './rotating-file-stream.js';

let directory: ReturnType<typeof temporaryDirectory>;
const opened: RotatingFileStream[] = [];

beforeEach(() => {
  directory = temporaryDirectory('rotate');
});
afterEach(async () => {
  for (const stream of opened.splice(0)) await stream.close();
  directory.remove();
});

function open(options: Partial<Parameters<typeof createRotatingFileStream>[0]> = {}) {
  const filePath = join(directory.path, 'logs', 'agentd.log');
  const stream = createRotatingFileStream({
    filePath,
    maxSizeBytes: 2048,
    maxFiles: 50,
    compress: true,
    ...options,
  });
  opened.push(stream);
  return stream;
}

function line(sequence: number): string {
  return `${JSON.stringify({ sequence, msg: `entry ${sequence}`, pad: 'x'.repeat(sequence % 37) })}\n`;
}

/** Rotated copies, oldest first, then the live file, decompressed. */
function readAll(filePath: string): { files: string[]; contents: string[] } {
  const directoryPath = join(filePath, '..');
  const base = filePath.slice(directoryPath.length + 1);
  const rotated = readdirSync(directoryPath)
    .filter((name) => name.startsWith(`${base}.`))
    .map((name) => ({ name, index: Number(/\.(\d+)(\.gz)?$/.exec(name)?.[1]) }))
    .sort((left, right) => right.index - left.index);
  const files = [...rotated.map((entry) => entry.name), base];
  const contents = files.map((name) => {
    const data = readFileSync(join(directoryPath, name));
    return name.endsWith('.gz') ? gunzipSync(data).toString('utf8') : data.toString('utf8');
  });
  return { files, contents };
}

function sequences(contents: string[]): number[] {
  return contents
    .join('')
    .split('\n')
    .filter((text) => text.length > 0)
    .map((text) => (JSON.parse(text) as { sequence: number }).sequence);
}

describe('createRotatingFileStream', () => {
  it('rolls past maxSize into gzipped copies without losing or splitting a line', async () => {
    const stream = open();
    for (let sequence = 0; sequence < 1500; sequence++) stream.write(line(sequence));
    await stream.whenIdle();
    const { files, contents } = readAll(stream.filePath);
    expect(files.length).toBeGreaterThan(20);
    expect(files.slice(0, -1).every((name) => /^agentd\.log\.\d+\.gz$/.test(name))).toBe(true);
    for (const content of contents) {
      expect(content.endsWith('\n')).toBe(true);
      expect(Buffer.byteLength(content)).toBeLessThanOrEqual(2048);
    }
    expect(sequences(contents)).toEqual(Array.from({ length: 1500 }, (_, index) => index));
  });

  it('keeps order and every line when writes interleave with background rotations', async () => {
    const stream = open({ maxSizeBytes: 1024 });
    let sequence = 0;
    for (let batch = 0; batch < 60; batch++) {
      for (let count = 0; count < 7; count++) stream.write(line(sequence++));
      await yieldToLoop();
    }
    await stream.whenIdle();
    expect(sequences(readAll(stream.filePath).contents)).toEqual(
      Array.from({ length: sequence }, (_, i) => i),
    );
  });

  it('keeps only maxFiles rotated copies, the newest ones', async () => {
    const stream = open({ maxFiles: 3 });
    for (let sequence = 0; sequence < 800; sequence++) {
      stream.write(line(sequence));
      if (sequence % 50 === 0) await yieldToLoop();
    }
    await stream.whenIdle();
    const { files, contents } = readAll(stream.filePath);
    expect(files).toEqual(['agentd.log.3.gz', 'agentd.log.2.gz', 'agentd.log.1.gz', 'agentd.log']);
    const kept = sequences(contents);
    expect(kept.at(-1)).toBe(799);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, index) => 800 - kept.length + index));
  });

  it('writes plain numbered copies when compress is off', async () => {
    const stream = open({ compress: false, maxFiles: 2 });
    for (let sequence = 0; sequence < 200; sequence++) stream.write(line(sequence));
    await stream.whenIdle();
    expect(readAll(stream.filePath).files).toEqual(['agentd.log.2', 'agentd.log.1', 'agentd.log']);
  });

  it('keeps no copies with maxFiles 0', async () => {
    const stream = open({ maxFiles: 0 });
    for (let sequence = 0; sequence < 200; sequence++) stream.write(line(sequence));
    await stream.whenIdle();
    expect(readdirSync(join(directory.path, 'logs'))).toEqual(['agentd.log']);
  });

  it('writes a line longer than maxSize whole, then rolls', async () => {
    const stream = open({ maxSizeBytes: 100 });
    const long = `${JSON.stringify({ sequence: 0, blob: 'y'.repeat(500) })}\n`;
    stream.write(line(1).replace('"sequence":1', '"sequence":-1'));
    stream.write(long);
    stream.write(line(1));
    await stream.whenIdle();
    const { contents } = readAll(stream.filePath);
    expect(contents).toContain(long);
    expect(sequences(contents)).toEqual([-1, 0, 1]);
  });

  it('appends to an existing live file and counts its size', () => {
    const filePath = join(directory.path, 'logs', 'agentd.log');
    const first = open();
    first.write(line(1));
    const size = first.size;
    const second = open();
    expect(second.size).toBe(size);
    second.write(line(2));
    expect(readFileSync(filePath, 'utf8')).toBe(line(1) + line(2));
  });

  it('finishes a rotation a previous process left half done', async () => {
    const first = open();
    first.write(line(1));
    await first.close();
    const leftover = join(directory.path, 'logs', 'agentd.log.rotating-99-1-1');
    writeFileSync(leftover, line(0));
    writeFileSync(join(directory.path, 'logs', 'agentd.log.1.gz'), Buffer.alloc(0));
    const second = open();
    await second.whenIdle();
    expect(existsSync(leftover)).toBe(false);
    expect(gunzipSync(readFileSync(`${second.filePath}.1.gz`)).toString()).toBe(line(0));
    expect(statSync(`${second.filePath}.2.gz`).size).toBe(0);
  });

  it('drops writes after close and counts them', async () => {
    const stream = open();
    stream.write(line(1));
    await stream.close();
    expect(stream.write(line(2))).toBe(false);
    expect(stream.droppedLines).toBe(1);
    expect(readFileSync(stream.filePath, 'utf8')).toBe(line(1));
  });

  it('rejects invalid options and unopenable paths with LoggingError codes', () => {
    expect(() => open({ maxSizeBytes: 0 })).toThrow(LoggingError);
    writeFileSync(join(directory.path, 'blocker'), 'a file, not a directory');
    try {
      createRotatingFileStream({ filePath: join(directory.path, 'blocker', 'agentd.log') });
      expect.unreachable();
    } catch (error) {
      expect((error as LoggingError).code).toBe('FILE_OPEN_FAILED');
    }
  });
});

describe('RotatingFileStream.applyOptions', () => {
  it('rolls at a new size from the next write and keeps the new number of copies', async () => {
    const stream = open({ maxSizeBytes: 1_000_000, maxFiles: 50, compress: false });
    for (let sequence = 0; sequence < 40; sequence++) stream.write(line(sequence));
    await stream.whenIdle();
    expect(existsSync(`${stream.filePath}.1`)).toBe(false);
    stream.applyOptions({ maxSizeBytes: 256, maxFiles: 2 });
    for (let sequence = 40; sequence < 80; sequence++) stream.write(line(sequence));
    await stream.whenIdle();
    const { files, contents } = readAll(stream.filePath);
    expect(files).toEqual(['agentd.log.2', 'agentd.log.1', 'agentd.log']);
    // Only the two newest copies stay; what is kept is in order and ends with the last line.
    const kept = sequences(contents);
    expect(kept.at(-1)).toBe(79);
    expect(kept).toEqual([...kept].sort((left, right) => left - right));
  });

  it('moves to a new file between two writes without losing a line', async () => {
    const stream = open({ maxSizeBytes: 512, compress: false });
    const before = stream.filePath;
    for (let sequence = 0; sequence < 30; sequence++) stream.write(line(sequence));
    const moved = join(directory.path, 'elsewhere', 'daemon.log');
    stream.applyOptions({ filePath: moved });
    for (let sequence = 30; sequence < 60; sequence++) stream.write(line(sequence));
    await stream.whenIdle();
    expect(stream.filePath).toBe(moved);
    const old = sequences(readAll(before).contents);
    const now = sequences(readAll(moved).contents);
    expect([...old, ...now]).toEqual(Array.from({ length: 60 }, (_, index) => index));
    expect(stream.droppedLines).toBe(0);
  });

  it('keeps the old file and options when the new file cannot be opened', () => {
    const stream = open();
    writeFileSync(join(directory.path, 'blocker'), 'a file, not a directory');
    expect(() =>
      stream.applyOptions({ filePath: join(directory.path, 'blocker', 'agentd.log'), maxSizeBytes: 1 }),
    ).toThrow(expect.objectContaining({ code: 'FILE_OPEN_FAILED' }));
    expect(() => stream.applyOptions({ maxFiles: -1 })).toThrow(LoggingError);
    expect(stream.write(line(1))).toBe(true);
    expect(stream.filePath).toBe(join(directory.path, 'logs', 'agentd.log'));
  });
});

describe('createLogger with a file destination', () => {
  it('rolls the daemon log through pino without losing a line', async () => {
    const filePath = join(directory.path, 'logs', 'agentd.log');
    const root = createLogger({
      destination: { filePath, maxSizeBytes: 4096, maxFiles: 100, compress: true },
    });
    const agent = root.module('agent');
    for (let sequence = 0; sequence < 600; sequence++) {
      agent.info({ sequence, itemCount: sequence }, 'tick');
      if (sequence % 25 === 0) await yieldToLoop();
    }
    await root.close();
    const { files, contents } = readAll(filePath);
    expect(files.length).toBeGreaterThan(5);
    expect(root.file?.droppedLines).toBe(0);
    expect(sequences(contents)).toEqual(Array.from({ length: 600 }, (_, index) => index));
  });
});
