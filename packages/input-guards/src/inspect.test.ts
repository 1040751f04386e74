import { describe, expect, it } from 'vitest';
import { inspectValue, pathText } from './inspect.js';

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let level = 0; level < depth; level++) value = { a: value };
  return value;
}

describe('inspectValue', () => {
  it('accepts values up to maxDepth levels of containers and names the path of the first one deeper', () => {
    expect(inspectValue(nested(3), { maxDepth: 3 })).toBeUndefined();
    expect(inspectValue(nested(4), { maxDepth: 3 })).toEqual({
      kind: 'depth',
      path: ['a', 'a', 'a'],
      maxDepth: 3,
    });
    expect(inspectValue({ list: [[[]]] }, { maxDepth: 3 })).toEqual({
      kind: 'depth',
      path: ['list', 0, 0],
      maxDepth: 3,
    });
    expect(inspectValue('scalar', { maxDepth: 0 })).toBeUndefined();
  });

  it('walks a value nested 100,000 levels deep without using the stack', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(inspectValue(deep, { maxDepth: 64 })).toMatchObject({ kind: 'depth', maxDepth: 64 });
  });

  it('refuses __proto__ anywhere by default and any key given in refusedKeys', () => {
    const parsed = JSON.parse('{"agents":{"entries":{"__proto__":{"name":"pp"}}}}');
    expect(inspectValue(parsed, { maxDepth: 64 })).toEqual({
      kind: 'key',
      path: ['agents', 'entries', '__proto__'],
      key: '__proto__',
    });
    const named = { meta: [{ constructor: 1 }] };
    expect(inspectValue(named, { maxDepth: 64 })).toBeUndefined();
    expect(inspectValue(named, { maxDepth: 64, refusedKeys: new Set(['constructor']) })).toEqual({
      kind: 'key',
      path: ['meta', 0, 'constructor'],
      key: 'constructor',
    });
  });
});

describe('pathText', () => {
  it('joins keys with dots and indexes in brackets after the root', () => {
    expect(pathText('params', ['metadata', 'tags', 2, 'x'])).toBe('params.metadata.tags[2].x');
    expect(pathText('params', [])).toBe('params');
  });
});
