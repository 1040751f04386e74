import { describe, expect, it } from 'vitest';
import { acquireAt, manualClock } from './internal/test-support.js';
import { SlidingWindowLimiter } from './sliding-window-limiter.js';

describe('SlidingWindowLimiter', () => {
  it('allows maxEvents in a window and refuses the next one', () => {
    const time = manualClock();
    const limiter = new SlidingWindowLimiter({ maxEvents: 3, windowMs: 1000, now: time.now });
    expect([limiter.tryAcquire(), limiter.tryAcquire(), limiter.tryAcquire()]).toEqual([true, true, true]);
    expect(limiter.tryAcquire()).toBe(false);
  });

  it('refuses a burst straddling a fixed-bucket edge that a bucketed counter would let through', () => {
    const time = manualClock();
    const limiter = new SlidingWindowLimiter({ maxEvents: 5, windowMs: 1000, now: time.now });
    time.set(999);
    for (let index = 0; index < 5; index += 1) expect(limiter.tryAcquire()).toBe(true);
    // A fixed bucket would reset at 1000 and accept five more here.
    time.set(1000);
    expect(limiter.tryAcquire()).toBe(false);
    time.set(1998);
    expect(limiter.tryAcquire()).toBe(false);
    // Exactly windowMs after the burst the first slot frees up.
    time.set(1999);
    for (let index = 0; index < 5; index += 1) expect(limiter.tryAcquire()).toBe(true);
    expect(limiter.tryAcquire()).toBe(false);
  });

  it('frees slots one by one as each event leaves the window', () => {
    const time = manualClock();
    const limiter = new SlidingWindowLimiter({ maxEvents: 3, windowMs: 100, now: time.now });
    // Slots taken at 0, 30 and 60 free up at 100, 130 and 160.
    const answers = acquireAt(limiter, time, [0, 30, 60, 99, 100, 100, 129, 130]);
    expect(answers).toEqual([true, true, true, false, true, false, false, true]);
  });

  it('never admits more than maxEvents in any window over a long irregular run', () => {
    const time = manualClock();
    const maxEvents = 7;
    const windowMs = 50;
    const limiter = new SlidingWindowLimiter({ maxEvents, windowMs, now: time.now });
    const accepted: number[] = [];
    let at = 0;
    let seed = 12345;
    for (let step = 0; step < 5000; step += 1) {
      // Deterministic pseudo-random gaps of 0..9 ms, bursts included.
      seed = (seed * 1103515245 + 12345) % 2147483648;
      at += seed % 10;
      time.set(at);
      if (limiter.tryAcquire()) accepted.push(at);
    }
    for (let index = maxEvents; index < accepted.length; index += 1) {
      // The event maxEvents places earlier must have left the window.
      expect(accepted[index]! - accepted[index - maxEvents]!).toBeGreaterThanOrEqual(windowMs);
    }
    // And the limiter is not stricter than needed: it refused only when the window was full.
    expect(accepted.length).toBeGreaterThan(5000 / 10);
  });

  it('does not count refused events against the window', () => {
    const time = manualClock();
    const limiter = new SlidingWindowLimiter({ maxEvents: 1, windowMs: 100, now: time.now });
    expect(limiter.tryAcquire()).toBe(true);
    for (let at = 1; at < 100; at += 1) {
      time.set(at);
      expect(limiter.tryAcquire()).toBe(false);
    }
    time.set(100);
    expect(limiter.tryAcquire()).toBe(true);
  });

  it('allows only its share of maxEvents while tightened, and the full limit again after', () => {
    const time = manualClock();
    let share = 1;
    const limiter = new SlidingWindowLimiter({
      maxEvents: 10,
      windowMs: 1000,
      now: time.now,
      share: () => share,
    });
    for (let index = 0; index < 4; index += 1) expect(limiter.tryAcquire()).toBe(true);
    share = 0.5;
    expect(limiter.tryAcquire()).toBe(true);
    expect(limiter.tryAcquire()).toBe(false);
    // The fifth-newest event (at t=0) leaves the window at t=1000.
    expect(limiter.retryAfterMs()).toBe(1000);
    time.set(1000);
    for (let index = 0; index < 5; index += 1) expect(limiter.tryAcquire()).toBe(true);
    expect(limiter.tryAcquire()).toBe(false);
    share = 1;
    for (let index = 0; index < 5; index += 1) expect(limiter.tryAcquire()).toBe(true);
    expect(limiter.tryAcquire()).toBe(false);
  });

  it('keeps one event per window however far it is tightened', () => {
    const time = manualClock();
    const limiter = new SlidingWindowLimiter({ maxEvents: 3, windowMs: 1000, now: time.now, share: () => 0 });
    expect(limiter.tryAcquire()).toBe(true);
    expect(limiter.tryAcquire()).toBe(false);
    time.set(1000);
    expect(limiter.tryAcquire()).toBe(true);
  });

  it('reports how long until the next event fits', () => {
    const time = manualClock();
    const limiter = new SlidingWindowLimiter({ maxEvents: 2, windowMs: 1000, now: time.now });
    expect(limiter.retryAfterMs()).toBe(0);
    limiter.tryAcquire();
    time.set(400);
    limiter.tryAcquire();
    time.set(600);
    expect(limiter.retryAfterMs()).toBe(400);
    time.set(1000);
    expect(limiter.retryAfterMs()).toBe(0);
  });

  it('forgets everything on reset', () => {
    const time = manualClock();
    const limiter = new SlidingWindowLimiter({ maxEvents: 2, windowMs: 1000, now: time.now });
    limiter.tryAcquire();
    limiter.tryAcquire();
    expect(limiter.tryAcquire()).toBe(false);
    limiter.reset();
    expect(limiter.tryAcquire()).toBe(true);
    expect(limiter.tryAcquire()).toBe(true);
    expect(limiter.tryAcquire()).toBe(false);
  });

  it('uses the real clock when none is injected', () => {
    const limiter = new SlidingWindowLimiter({ maxEvents: 120, windowMs: 10_000 });
    let accepted = 0;
    for (let index = 0; index < 121; index += 1) if (limiter.tryAcquire()) accepted += 1;
    expect(accepted).toBe(120);
  });

  it('refuses invalid options with INVALID_OPTIONS', () => {
    expect(() => new SlidingWindowLimiter({ maxEvents: 0, windowMs: 1000 })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
    expect(() => new SlidingWindowLimiter({ maxEvents: 1.5, windowMs: 1000 })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
    expect(() => new SlidingWindowLimiter({ maxEvents: 5, windowMs: 0 })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
    expect(() => new SlidingWindowLimiter({ maxEvents: 1_000_000, windowMs: 10 })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
  });
});
