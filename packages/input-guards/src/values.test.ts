import { describe, expect, it } from 'vitest';
import { ownPath, valueText } from './values.js';

describe('ownPath', () => {
  it('follows own properties of objects and arrays', () => {
    const root = { a: { b: [10, { c: 'x' }] } };
    expect(ownPath(root, ['a', 'b', '1', 'c'])).toBe('x');
    expect(ownPath(root, [])).toBe(root);
    expect(ownPath(root, ['a', 'missing'])).toBeUndefined();
    expect(ownPath(root, ['a', 'b', '0', 'deeper'])).toBeUndefined();
  });

  it('never reaches inherited members or a prototype', () => {
    expect(ownPath({}, ['toString'])).toBeUndefined();
    expect(ownPath({ a: {} }, ['a', '__proto__'])).toBeUndefined();
    expect(ownPath([], ['length'])).toBe(0);
    expect(ownPath(null, ['a'])).toBeUndefined();
  });
});

describe('valueText', () => {
  it('writes scalars as text and objects as JSON', () => {
    expect(valueText('plain')).toBe('plain');
    expect(valueText(42)).toBe('42');
    expect(valueText(false)).toBe('false');
    expect(valueText(10n)).toBe('10');
    expect(valueText({ a: [1, 'b'] })).toBe('{"a":[1,"b"]}');
  });

  it('answers empty for nothing, functions, symbols and what JSON cannot hold', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const value of [null, undefined, () => 1, Symbol('s'), cyclic, { n: 1n }]) {
      expect(valueText(value)).toBe('');
    }
  });
});
