import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FdStream } from './fd-stream.js';
import { temporaryDirectory } from './test-support.js';

/**
 * Opens a new file in a temporary directory (`'a'` to append; `'r'`, read-only, for a
 * descriptor every write to fails), runs `use` with it, then closes it and removes the directory.
 */
async function withFile(flags: 'a' | 'r', use: (fd: number, path: string) => Promise<void>): Promise<void> {
  const directory = temporaryDirectory('fd');
  const path = join(directory.path, 'out.log');
  writeFileSync(path, '');
  const fd = openSync(path, flags);
  try {
    await use(fd, path);
  } finally {
    closeSync(fd);
    directory.remove();
  }
}

describe('FdStream', () => {
  it('writes lines in order and resolves flush once they are written', async () => {
    await withFile('a', async (fd, path) => {
      const stream = new FdStream({ fd, maxPendingBytes: 1024 * 1024 });
      for (let i = 0; i < 100; i += 1) stream.write(`line ${i}\n`);
      await stream.flush();
      const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
      expect(lines).toHaveLength(100);
      expect(lines[99]).toBe('line 99');
      expect(stream.dropped).toBe(0);
    });
  });

  it('stops writing after a write error, drops later lines without throwing and still flushes', async () => {
    // Writing to a descriptor opened for reading fails (EBADF), like a closed pipe fails (EPIPE).
    await withFile('r', async (fd) => {
      const stream = new FdStream({ fd, maxPendingBytes: 1024 * 1024 });
      stream.write('first\n');
      await stream.flush();
      expect(stream.broken?.code).toBe('EBADF');
      expect(stream.write('second\n')).toBe(true);
      await stream.flush();
      expect(stream.dropped).toBe(2);
    });
  });

  it('drops lines beyond maxPendingBytes instead of holding them', async () => {
    await withFile('a', async (fd, path) => {
      const stream = new FdStream({ fd, maxPendingBytes: 10 });
      // The first line goes out at once; the second fits the pending budget; the third does not.
      stream.write('012345678\n');
      stream.write('abcdefghi\n');
      stream.write('this one is dropped\n');
      await stream.flush();
      expect(stream.dropped).toBe(1);
      expect(readFileSync(path, 'utf8')).toBe('012345678\nabcdefghi\n');
    });
  });
});
