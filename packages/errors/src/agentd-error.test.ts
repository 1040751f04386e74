import { describe, expect, expectTypeOf, it } from 'vitest';
import { AgentdError, errorGuard } from './index.js';

type ParrotCode = 'SQUAWK' | 'FLEW_OFF';

class ParrotError extends AgentdError<ParrotCode> {
  override readonly name = 'ParrotError';
}

/** A subclass of a package's class, as a package with a family of errors would write it. */
class LoudParrotError extends ParrotError {}

class CageError extends AgentdError<'LOCKED', { door: number }> {
  override name = 'CageError';
}

const isParrotError = errorGuard(ParrotError);
const isCageError = errorGuard(CageError);

describe('AgentdError', () => {
  it('carries code, message, data and the subclass name', () => {
    const error = new ParrotError('SQUAWK', 'too loud', { data: { decibels: 120 } });
    expect(error).toBeInstanceOf(ParrotError);
    expect(error).toBeInstanceOf(AgentdError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ParrotError');
    expect(error.code).toBe('SQUAWK');
    expect(error.message).toBe('too loud');
    expect(error.data).toEqual({ decibels: 120 });
    expect(String(error)).toBe('ParrotError: too loud');
    expect(error.stack).toContain('too loud');
  });

  it('keeps the underlying error as the standard cause and sets no cause without one', () => {
    const root = new Error('disk full');
    const wrapped = new ParrotError('FLEW_OFF', 'gone', { cause: root });
    expect(wrapped.cause).toBe(root);
    expect(wrapped.data).toBeUndefined();
    const bare = new ParrotError('SQUAWK', 'no options');
    expect('cause' in bare).toBe(false);
    expect(bare.data).toBeUndefined();
    // A falsy cause other than undefined is still a cause.
    expect(new ParrotError('SQUAWK', 'zero', { cause: 0 }).cause).toBe(0);
  });

  it('types code and data from the subclass', () => {
    expectTypeOf<ParrotError['code']>().toEqualTypeOf<ParrotCode>();
    expectTypeOf<ParrotError['data']>().toEqualTypeOf<Record<string, unknown> | undefined>();
    expectTypeOf<CageError['data']>().toEqualTypeOf<{ door: number } | undefined>();
    expectTypeOf<ParrotError['name']>().toEqualTypeOf<'ParrotError'>();
    expectTypeOf<CageError['name']>().toEqualTypeOf<string>();
    // @ts-expect-error: a code outside the union does not compile
    new ParrotError('MEOW', 'wrong animal');
    // @ts-expect-error: data of the wrong shape does not compile
    new CageError('LOCKED', 'stuck', { data: { door: 'front' } });
  });
});

describe('errorGuard', () => {
  it('recognises instances of the class and its subclasses, optionally of one code', () => {
    const error = new ParrotError('SQUAWK', 'too loud');
    expect(isParrotError(error)).toBe(true);
    expect(isParrotError(error, 'SQUAWK')).toBe(true);
    expect(isParrotError(error, 'FLEW_OFF')).toBe(false);
    expect(isParrotError(new LoudParrotError('FLEW_OFF', 'gone'), 'FLEW_OFF')).toBe(true);
  });

  it('refuses other errors, look-alikes and non-errors', () => {
    expect(isParrotError(new CageError('LOCKED', 'stuck'))).toBe(false);
    expect(isCageError(new ParrotError('SQUAWK', 'too loud'))).toBe(false);
    expect(isParrotError(Object.assign(new Error('x'), { name: 'ParrotError', code: 'SQUAWK' }))).toBe(false);
    for (const value of [undefined, null, 'SQUAWK', 42, { code: 'SQUAWK' }]) {
      expect(isParrotError(value)).toBe(false);
    }
  });

  it('narrows to the class and types the code argument', () => {
    const value: unknown = new CageError('LOCKED', 'stuck', { data: { door: 2 } });
    if (isCageError(value)) expectTypeOf(value).toEqualTypeOf<CageError>();
    expectTypeOf(isParrotError).parameter(1).toEqualTypeOf<ParrotCode | undefined>();
    // @ts-expect-error: a code of another class does not compile
    isParrotError(value, 'LOCKED');
  });
});
