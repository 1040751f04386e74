import { describe, expect, it } from 'vitest';
import { startMemoryGuard } from './memory-guard.js';

const MB = 2 ** 20;

describe('startMemoryGuard', () => {
  it('sheds above the mark, drops caches once, and admits again only below 90 % of it', () => {
    let rss = 100 * MB;
    const changes: Array<[boolean, number]> = [];
    let dropped = 0;
    const guard = startMemoryGuard({
      highWaterMb: 200,
      rss: () => rss,
      onChange: (shedding, mb) => changes.push([shedding, mb]),
      dropCaches: () => dropped++,
    });
    try {
      guard.check();
      expect(guard.shedding).toBe(false);
      expect(() => guard.admitTurn()).not.toThrow();
      rss = 201 * MB;
      guard.check();
      guard.check();
      expect(guard.shedding).toBe(true);
      expect(dropped).toBe(1);
      let refusal: unknown;
      try {
        guard.admitTurn();
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toMatchObject({ code: -32000, data: { code: 'OVERLOADED', retryAfterMs: 10_000 } });
      expect((refusal as Error).message).toContain('gateway.memoryHighWaterMb (200 MB)');
      // Between 90 % and the mark it keeps shedding: no flapping on the line.
      rss = 185 * MB;
      guard.check();
      expect(guard.shedding).toBe(true);
      rss = 170 * MB;
      guard.check();
      expect(guard.shedding).toBe(false);
      expect(() => guard.admitTurn()).not.toThrow();
      expect(changes).toEqual([
        [true, 201],
        [false, 170],
      ]);
    } finally {
      guard.stop();
    }
  });

  it('does nothing with a mark of 0', () => {
    const guard = startMemoryGuard({ highWaterMb: 0, rss: () => 10 ** 12 });
    guard.check();
    expect(guard.shedding).toBe(false);
    guard.stop();
  });
});
