import { describe, expect, it } from 'vitest';
import { changesOf, type FieldSchema, fieldKind, getAt, patchOf, setAt } from './config-form.js';

const schema: FieldSchema = {
  type: 'object',
  properties: {
    enabled: { type: 'boolean' },
    intervalMs: { type: 'integer', minimum: 1000 },
    mode: { type: 'string', enum: ['auto', 'require'] },
    nested: { type: 'object', properties: { name: { type: 'string' } } },
    rules: { type: 'array' },
  },
};

describe('config form', () => {
  it('picks a control per schema node and edits everything else as JSON', () => {
    expect(fieldKind({ type: 'boolean' })).toBe('boolean');
    expect(fieldKind({ type: 'string', enum: ['a'] })).toBe('enum');
    expect(fieldKind({ type: 'string', maxLength: 16_000 })).toBe('text');
    expect(fieldKind({ type: 'object', properties: {} })).toBe('json');
    expect(fieldKind({ type: 'array' })).toBe('json');
    expect(fieldKind({ type: ['string', 'null'] })).toBe('json');
  });

  it('lists changed leaves and patches only those', () => {
    const before = { enabled: false, intervalMs: 5000, mode: 'auto', nested: { name: 'a' }, rules: [1] };
    let after = setAt(before, ['intervalMs'], 6000);
    after = setAt(after, ['nested', 'name'], 'b');
    after = setAt(after, ['rules'], [1, 2]);
    const changes = changesOf(schema, before, after);
    expect(changes).toEqual([
      { path: ['intervalMs'], before: 5000, after: 6000 },
      { path: ['nested', 'name'], before: 'a', after: 'b' },
      { path: ['rules'], before: [1], after: [1, 2] },
    ]);
    expect(patchOf(changes)).toEqual({ intervalMs: 6000, nested: { name: 'b' }, rules: [1, 2] });
    // The original is untouched.
    expect(before.intervalMs).toBe(5000);
  });

  it('reads and writes own properties only, so hostile keys stay plain data', () => {
    expect(getAt({}, ['__proto__', 'polluted'])).toBeUndefined();
    expect(getAt({ a: 1 }, ['toString'])).toBeUndefined();
    const written = setAt({}, ['__proto__', 'polluted'], true);
    expect(Object.hasOwn(written, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(written)).toBe(Object.prototype);
  });
});
