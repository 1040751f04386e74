/** A clock the limiter tests move by hand: `now` is injected into the limiter, `set` jumps to a time in ms. */
export function manualClock(start = 0): { now: () => number; set: (value: number) => void } {
  let time = start;
  return {
    now: () => time,
    set: (value: number) => {
      time = value;
    },
  };
}

/**
 * Moves `time` to each of `times` in turn and tries one acquisition there, so a test states a
 * limiter's timeline as data: the answers come back in order, one per time.
 */
export function acquireAt(
  limiter: { tryAcquire(): boolean },
  time: { set: (value: number) => void },
  times: number[],
): boolean[] {
  return times.map((at) => {
    time.set(at);
    return limiter.tryAcquire();
  });
}
