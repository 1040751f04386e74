import { describe, expect, it } from 'vitest';
import { isToolPattern, matchesAnyToolPattern, matchesToolPattern, TOOL_NAME } from './tool-patterns.js';

describe('matchesToolPattern', () => {
  it('matches whole names: * any run (none included), ? one character, every other character itself', () => {
    const cases: Array<[pattern: string, name: string, matches: boolean]> = [
      ['*', 'anything', true],
      ['file_read', 'file_read', true],
      ['file_read', 'file_reader', false],
      ['memory_*', 'memory_search', true],
      ['memory_*', 'memory_', true],
      ['memory_*', 'xmemory_search', false],
      ['*_delete', 'file_delete', true],
      ['*_delete', 'file_delete_all', false],
      ['*login*', 'browser_login_form', true],
      ['*login*', 'login', true],
      ['*login*', 'logi', false],
      ['mem?ry_search', 'memory_search', true],
      ['mem?ry_search', 'memry_search', false],
      ['a.b', 'a.b', true],
      ['a.b', 'axb', false],
      ['a*b*c', 'aXbYc', true],
      ['a*b*c', 'aXbY', false],
      ['**', '', true],
      ['?', '', false],
      ['File_read', 'file_read', false],
    ];
    for (const [pattern, name, matches] of cases)
      expect(matchesToolPattern(pattern, name), `${pattern} ~ ${name}`).toBe(matches);
  });

  it('answers a many-star pattern against a long name without backtracking blow-up', () => {
    // A regular expression built from this glob backtracks over every way to split the name.
    const pattern = `${'*a'.repeat(60)}*b`;
    expect(matchesToolPattern(pattern, 'a'.repeat(64))).toBe(false);
    expect(matchesToolPattern(pattern, `${'a'.repeat(63)}b`)).toBe(true);
  });

  it('matches a list when any pattern matches', () => {
    expect(matchesAnyToolPattern(['x', '*_delete'], 'file_delete')).toBe(true);
    expect(matchesAnyToolPattern([], 'file_delete')).toBe(false);
  });
});

describe('isToolPattern / TOOL_NAME', () => {
  it('takes names and globs of the tool alphabet only', () => {
    for (const pattern of ['*', 'memory_*', 'a.b-c', 'mem?ry', '*login*'])
      expect(isToolPattern(pattern), pattern).toBe(true);
    for (const pattern of ['', 'a b', 'files/read', '[a-z]*', '{a,b}', '(.*)+', 'x'.repeat(129), 7])
      expect(isToolPattern(pattern), String(pattern)).toBe(false);
    expect(TOOL_NAME.test('file_read')).toBe(true);
    expect(TOOL_NAME.test('file_*')).toBe(false);
  });
});
