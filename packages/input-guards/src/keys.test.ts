import { describe, expect, it } from 'vitest';
import { isUnsafeKey, ownEntry } from './keys.js';

describe('ownEntry', () => {
  it('finds own entries only, never an inherited built-in', () => {
    const agents: Record<string, { name: string }> = { alpha: { name: 'Alpha' } };
    expect(ownEntry(agents, 'alpha')).toEqual({ name: 'Alpha' });
    for (const id of ['toString', 'valueOf', 'hasOwnProperty', 'constructor', 'isPrototypeOf', '__proto__']) {
      expect(ownEntry(agents, id), id).toBeUndefined();
    }
    expect(ownEntry(undefined, 'alpha')).toBeUndefined();
  });
});

describe('isUnsafeKey', () => {
  it('names the keys that reach a prototype', () => {
    expect(['__proto__', 'constructor', 'prototype'].map(isUnsafeKey)).toEqual([true, true, true]);
    expect(['proto', 'toString', 'name'].map(isUnsafeKey)).toEqual([false, false, false]);
  });
});
