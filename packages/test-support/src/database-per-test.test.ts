import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { databasePerTest } from './database-per-test.js';

describe('databasePerTest', () => {
  const closed: string[] = [];
  const seen: string[] = [];
  const temp = databasePerTest('test-support-db-', async (dir) => ({
    dir,
    close: async () => {
      closed.push(dir);
    },
  }));
  afterAll(() => {
    // Each test got its own directory, closed and removed after it.
    expect(closed).toEqual(seen);
    for (const dir of seen) expect(existsSync(dir)).toBe(false);
  });

  it.each([1, 2])('gives test %i a fresh directory and what open made in it', () => {
    expect(existsSync(temp.dir)).toBe(true);
    expect(temp.db.dir).toBe(temp.dir);
    expect(seen).not.toContain(temp.dir);
    seen.push(temp.dir);
  });
});
