import { describe, expect, it } from 'vitest';
import { extractBearer } from './bearer.js';

describe('extractBearer', () => {
  it('reads the Authorization bearer header', () => {
    expect(extractBearer({ headers: { authorization: 'Bearer abc.def' } })).toBe('abc.def');
  });

  it('treats the scheme case-insensitively and tolerates extra spaces', () => {
    expect(extractBearer({ headers: { authorization: 'bearer   xyz ' } })).toBe('xyz');
    expect(extractBearer({ headers: { authorization: 'BEARER xyz' } })).toBe('xyz');
  });

  it('ignores other schemes and an empty bearer', () => {
    expect(extractBearer({ headers: { authorization: 'Basic dXNlcjpwYXNz' } })).toBeUndefined();
    expect(extractBearer({ headers: { authorization: 'Bearer ' } })).toBeUndefined();
    expect(extractBearer({ headers: { authorization: 'Bearer a b' } })).toBeUndefined();
  });

  it('returns undefined when nothing is presented', () => {
    expect(extractBearer({ headers: {}, url: '/ws' }, { allowQuery: true })).toBeUndefined();
  });

  it('reads ?token= only when the query is allowed', () => {
    const request = { headers: {}, url: '/ws?foo=1&token=q%2Bsecret' };
    expect(extractBearer(request, { allowQuery: true })).toBe('q+secret');
    expect(extractBearer(request, { allowQuery: false })).toBeUndefined();
    expect(extractBearer(request)).toBeUndefined();
  });

  it('prefers the header over the query', () => {
    const request = { headers: { authorization: 'Bearer from-header' }, url: '/ws?token=from-query' };
    expect(extractBearer(request, { allowQuery: true })).toBe('from-header');
  });

  it('falls back to the query when the header has another scheme', () => {
    const request = { headers: { authorization: 'Basic Zm9v' }, url: '/ws?token=from-query' };
    expect(extractBearer(request, { allowQuery: true })).toBe('from-query');
  });

  it('treats an empty query token as none', () => {
    expect(extractBearer({ headers: {}, url: '/ws?token=' }, { allowQuery: true })).toBeUndefined();
  });

  it('reads the first value when headers arrive as an array', () => {
    expect(extractBearer({ headers: { authorization: ['Bearer first', 'Bearer second'] } })).toBe('first');
  });
});
