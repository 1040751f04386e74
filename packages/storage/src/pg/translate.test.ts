import { describe, expect, it } from 'vitest';
import { bindArguments, translatePlaceholders } from './translate.js';

describe('translatePlaceholders', () => {
  it('numbers positional placeholders in order', () => {
    expect(translatePlaceholders('SELECT * FROM t WHERE a = ? AND b = ?').text).toBe(
      'SELECT * FROM t WHERE a = $1 AND b = $2',
    );
  });

  it('maps each name once, reusing its number', () => {
    const translated = translatePlaceholders('UPDATE t SET a = :a, b = @b WHERE a = :a OR c = $c');
    expect(translated.text).toBe('UPDATE t SET a = $1, b = $2 WHERE a = $1 OR c = $3');
    expect(translated.names).toEqual(['a', 'b', 'c']);
  });

  it('leaves literals, quoted identifiers, comments, casts and dollar quotes alone', () => {
    const sql =
      "SELECT '?', 'it''s :x', \"col?\" , x::bigint, $$ ? :y $$, $t$ ? $t$ -- ? :z\n FROM t /* ? */ WHERE a = ?";
    expect(translatePlaceholders(sql).text).toBe(
      "SELECT '?', 'it''s :x', \"col?\" , x::bigint, $$ ? :y $$, $t$ ? $t$ -- ? :z\n FROM t /* ? */ WHERE a = $1",
    );
  });

  it('passes native $n statements through', () => {
    const translated = translatePlaceholders('SELECT $1::int + $2::int');
    expect(translated.text).toBe('SELECT $1::int + $2::int');
    expect(bindArguments(translated, [1, 2], 'x')).toEqual([1, 2]);
  });

  it('refuses mixed styles, a wrong count and undefined arguments', () => {
    expect(() => translatePlaceholders('SELECT ? , :a_mixed')).toThrow(/mixes/);
    const translated = translatePlaceholders('SELECT ?, ?');
    expect(() => bindArguments(translated, [1], 'x')).toThrow(/2 placeholders but 1/);
    const named = translatePlaceholders('SELECT :only_name');
    expect(() => bindArguments(named, {}, 'x')).toThrow(/undefined/);
  });

  it('binds booleans as 1/0, bigints as text and bytes as a Buffer', () => {
    const translated = translatePlaceholders('SELECT :a, :b, :c');
    const bound = bindArguments(translated, { a: true, b: 2n ** 60n, c: new Uint8Array([1, 2]) }, 'x');
    expect(bound[0]).toBe(1);
    expect(bound[1]).toBe('1152921504606846976');
    expect(Buffer.isBuffer(bound[2])).toBe(true);
  });
});
