import { describe, expect, it } from 'vitest';
import { lightStem, proximityShare, proximityStems } from './proximity.js';

describe('term proximity', () => {
  it('strips the commonest inflections and keeps short words whole', () => {
    expect(lightStem('painted')).toBe('paint');
    expect(lightStem('sunrises')).toBe('sunrise');
    expect(lightStem('is')).toBe('is');
  });

  it("counts the question's word pairs that stand close together in the text", () => {
    const stems = proximityStems('When did Melanie paint a sunrise?');
    expect(stems).toEqual(['melanie', 'paint', 'sunrise']);
    expect(proximityShare(stems, '[1 May] Melanie: I painted that sunrise last year.')).toBeCloseTo(1 / 3);
    expect(
      proximityShare(stems, '[1 May] Ana: I painted the fence, then we walked far away to see the sunrise.'),
    ).toBe(0);
    expect(proximityShare(['paint'], 'paint paint')).toBe(0);
  });
});
