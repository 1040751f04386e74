import { describe, expect, it } from 'vitest';
import { rejectionOf, thrownBy } from './failures.js';

describe('thrownBy and rejectionOf', () => {
  it('answer what a failing call threw, checked against the expected class', async () => {
    const error = new RangeError('out');
    expect(
      thrownBy(() => {
        throw error;
      }, RangeError),
    ).toBe(error);
    expect(await rejectionOf(Promise.reject(error))).toBe(error);
    expect(() => thrownBy(() => 1)).toThrow('expected the call to throw');
    await expect(rejectionOf(Promise.resolve(1))).rejects.toThrow('expected the call to reject');
    expect(() =>
      thrownBy(() => {
        throw error;
      }, TypeError),
    ).toThrow('expected a TypeError, got RangeError: out');
  });
});
