import { describe, expect, it } from 'vitest';
import { isMediaError } from './errors.js';
import { createHourlyLimiter } from './image-gen.js';

function refusal(take: () => void): unknown {
  try {
    take();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('createHourlyLimiter', () => {
  it('allows maxPerHour calls per agent in any rolling hour and says when the next is allowed', () => {
    let clock = 1_000;
    const limiter = createHourlyLimiter(() => clock);
    limiter.take('ada', 2);
    clock += 600_000;
    limiter.take('ada', 2);
    limiter.take('bob', 2);
    const refused = refusal(() => limiter.take('ada', 2));
    expect(isMediaError(refused, 'RATE_LIMITED')).toBe(true);
    expect((refused as { data: unknown }).data).toEqual({
      limit: 2,
      agentId: 'ada',
      retryAfterMs: 3_000_000,
    });
    clock += 3_000_000;
    limiter.take('ada', 2);
    expect(
      isMediaError(
        refusal(() => limiter.take('ada', 2)),
        'RATE_LIMITED',
      ),
    ).toBe(true);
  });

  it('refuses every call at a limit of 0 and starts afresh when the limit changes', () => {
    const limiter = createHourlyLimiter(() => 5);
    expect(
      isMediaError(
        refusal(() => limiter.take('ada', 0)),
        'RATE_LIMITED',
      ),
    ).toBe(true);
    limiter.take('ada', 1);
    expect(
      isMediaError(
        refusal(() => limiter.take('ada', 1)),
        'RATE_LIMITED',
      ),
    ).toBe(true);
    limiter.take('ada', 3);
    limiter.take('ada', 3);
  });
});
