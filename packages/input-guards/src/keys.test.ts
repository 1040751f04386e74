import { describe, expect, it } from 'vitest';
import { hasMethods, isUnsafeKey, ownEntry } from './keys.js';

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

describe('hasMethods', () => {
  it('accepts an object with every named function, own or inherited', () => {
    class Logger {
      debug() {}
      info() {}
    }
    expect(hasMethods(new Logger(), ['debug', 'info'])).toBe(true);
    expect(hasMethods({ chat: () => 'x', embed() {} }, ['chat', 'embed'])).toBe(true);
    expect(hasMethods({}, [])).toBe(true);
  });

  it('refuses non-objects and objects missing a function', () => {
    for (const value of [undefined, null, 'debug', 42, () => undefined]) {
      expect(hasMethods(value, ['debug'])).toBe(false);
    }
    expect(hasMethods({ debug: () => undefined, info: 'no' }, ['debug', 'info'])).toBe(false);
    expect(hasMethods({ debug: () => undefined }, ['debug', 'info'])).toBe(false);
  });
});
