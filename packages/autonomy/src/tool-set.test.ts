import { describe, expect, it } from 'vitest';
import { autonomySectionSchema } from './config.js';
import { intersectToolSets, resolveToolSet } from './tool-set.js';

describe('resolveToolSet', () => {
  const names = ['file_delete', 'file_read', 'memory_search', 'mem_search', 'subagent_list'];

  it('applies allow and deny lists as globs: suffixes, parts and one-character wildcards', () => {
    expect(resolveToolSet(names, ['*'], ['*_delete'])).toEqual([
      'file_read',
      'mem_search',
      'memory_search',
      'subagent_list',
    ]);
    expect(resolveToolSet(names, ['*_search'], ['mem?ry_*'])).toEqual(['mem_search']);
    expect(resolveToolSet(names, ['*file*'], [], ['*read'])).toEqual(['file_delete']);
  });

  it('never widens a child past its parent', () => {
    expect(intersectToolSets(['a', 'b'], ['b', 'c'])).toEqual(['b']);
  });
});

describe('autonomy config', () => {
  it('refuses a profile pattern outside the glob syntax, naming the field', () => {
    const parsed = autonomySectionSchema.safeParse({ defaultProfile: ['subagent_list', 'sub agent'] });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['defaultProfile.1']);
  });
});
