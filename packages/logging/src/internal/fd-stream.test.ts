import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FdStream } from './fd-stream.js';
import { temporaryDirectory } from './test-support.js';

describe('FdStream', () => {
  it('writes lines in order and resolves flush once they are written', async () => {
    const directory = temporaryDirectory('fd');
    const path = join(directory.path, 'out.log');
    const fd = openSync(path, 'a');
    try {
      const stream = new FdStream({ fd, maxPendingBytes: 1024 * 1024 });
      for (let i = 0; i < 100; i += 1) stream.write(`line ${i}\n`);
      await stream.flush();
      const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
      expect(lines).toHaveLength(100);
      expect(lines[99]).toBe('line 99');
      expect(stream.dropped).toBe(0);
    } finally {
      closeSync(fd);
      directory.remove();
    }
  });

  it('stops writing after a write error, drops later lines without throwing and still flushes', async () => {
    const directory = temporaryDirectory('fd-broken');
    const path = join(directory.path, 'read-only.log');
    writeFileSync(path, '');
    // Writing to a descriptor opened for reading fails (EBADF), like a closed pipe fails (EPIPE).
    const fd = openSync(path, 'r');
    try {
      const stream = new FdStream({ fd, maxPendingBytes: 1024 * 1024 });
      stream.write('first\n');
      await stream.flush();
      expect(stream.broken?.code).toBe('EBADF');
      expect(stream.write('second\n')).toBe(true);
      await stream.flush();
      expect(stream.dropped).toBe(2);
    } finally {
      closeSync(fd);
      directory.remove();
    }
  });

  it('drops lines beyond maxPendingBytes instead of holding them', async () => {
    const directory = temporaryDirectory('fd-cap');
    const path = join(directory.path, 'out.log');
    const fd = openSync(path, 'a');
    try {
      const stream = new FdStream({ fd, maxPendingBytes: 10 });
      // The first line goes out at once; the second fits the pending budget; the third does not.
      stream.write('012345678\n');
      stream.write('abcdefghi\n');
      stream.write('this one is dropped\n');
      await stream.flush();
      expect(stream.dropped).toBe(1);
      expect(readFileSync(path, 'utf8')).toBe('012345678\nabcdefghi\n');
    } finally {
      closeSync(fd);
      directory.remove();
    }
  });
});
