import { describe, expect, it } from 'vitest';
import { reactiveState } from './reactive-state.js';

interface Page {
  rows: string[];
  error: string;
}

describe('reactiveState', () => {
  it('declares each named field as internal state, with no attribute', () => {
    expect(reactiveState<Page>('rows', 'error')).toEqual({ rows: { state: true }, error: { state: true } });
  });
});
