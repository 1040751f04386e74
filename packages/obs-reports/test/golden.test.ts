import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { matchGolden } from './golden.js';

describe('matchGolden', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'golden-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('fails in CI when the golden file is missing, and writes nothing', () => {
    const path = join(dir, 'missing.json');
    expect(() => matchGolden(path, { a: 1 }, { CI: 'true' })).toThrow(
      /golden file .*missing\.json is missing/,
    );
    expect(existsSync(path)).toBe(false);
  });

  it('records a missing golden outside CI so a new case can be reviewed', () => {
    const path = join(dir, 'new.json');
    matchGolden(path, { a: 1 }, {});
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ a: 1 });
    matchGolden(path, { a: 1 }, { CI: 'false' });
  });

  it('fails when the value differs from the committed golden, in CI or not', () => {
    const path = join(dir, 'pinned.json');
    writeFileSync(path, '{"a":1}\n');
    expect(() => matchGolden(path, { a: 2 }, {})).toThrow();
    expect(() => matchGolden(path, { a: 2 }, { CI: 'true' })).toThrow();
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}\n');
  });

  it('rewrites the golden on UPDATE_GOLDEN=1, also in CI', () => {
    const path = join(dir, 'pinned.json');
    writeFileSync(path, '{"a":1}\n');
    matchGolden(path, { a: 2 }, { UPDATE_GOLDEN: '1', CI: 'true' });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ a: 2 });
  });
});
