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
