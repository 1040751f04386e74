/** What a lane holds: anything with the time it may next be attempted. */
export interface LaneItem {
  /** Epoch ms; an item is due when this is not in the future. */
  dueAt(): number;
  /**
   * An item that must leave the lane (sent or given up) before this one is attempted: the
   * previous part of a message split in parts, so a retry never lets a later part overtake it.
   */
  after?: LaneItem | undefined;
}

interface Lane<T> {
  /** In the order they are to be attempted. */
  items: T[];
  /** `running` holds one of the slots; `waiting` is in line for one. */
  state: 'idle' | 'waiting' | 'running';
  timer: NodeJS.Timeout | undefined;
}

/** Options of {@link createLanes}. */
export interface LanesOptions<T> {
  /** Lanes running at once. */
  concurrency: number;
  now(): number;
  /** Works on one due item; answers whether it stays in its lane (to be attempted again later). */
  run(item: T): Promise<boolean>;
  /** A `run` that threw; the item is dropped from memory (its stored row stays as it was). */
  onError(error: unknown, item: T): void;
}

/**
 * Per-chat lanes held in memory: the items of one chat are attempted one at a time in order,
 * chats run in parallel up to `concurrency`, and an item that is not due yet (a retry waiting
 * for its backoff) does not hold back the due items behind it, unless they name it as `after`. A lane with nothing due sleeps
 * on a timer until its first item comes due.
 */
export interface Lanes<T extends LaneItem> {
  /** True when an item added to this chat now would be attempted at once. */
  startsAt(chat: string): boolean;
  /** Appends an item to its chat's lane and runs the lane when it has a free slot. */
  add(chat: string, item: T): void;
  /** Stops starting work and resolves when the running lanes have finished their item. */
  close(): Promise<void>;
}

/** Creates the lanes. */
export function createLanes<T extends LaneItem>(options: LanesOptions<T>): Lanes<T> {
  const lanes = new Map<string, Lane<T>>();
  const waiting: string[] = [];
  const running = new Set<Promise<void>>();
  let active = 0;
  let closed = false;

  const firstDue = (lane: Lane<T>): T | undefined => {
    const at = options.now();
    return lane.items.find(
      (item) => item.dueAt() <= at && (item.after === undefined || !lane.items.includes(item.after as T)),
    );
  };

  const wake = (chat: string): void => {
    const lane = lanes.get(chat);
    if (lane?.state !== 'idle' || closed) return;
    clearTimeout(lane.timer);
    lane.timer = undefined;
    if (lane.items.length === 0) {
      lanes.delete(chat);
      return;
    }
    if (!firstDue(lane)) {
      const next = lane.items.reduce((soonest, item) => Math.min(soonest, item.dueAt()), Infinity);
      lane.timer = setTimeout(() => wake(chat), Math.max(0, next - options.now()));
      lane.timer.unref?.();
      return;
    }
    if (active < options.concurrency) start(chat, lane);
    else {
      lane.state = 'waiting';
      waiting.push(chat);
    }
  };

  const start = (chat: string, lane: Lane<T>): void => {
    lane.state = 'running';
    active++;
    const done: Promise<void> = work(lane).finally(() => {
      running.delete(done);
      active--;
      lane.state = 'idle';
      wake(chat);
      // The slot this lane gave back goes to the lane that waited longest.
      while (active < options.concurrency && waiting.length > 0) {
        const next = waiting.shift() ?? '';
        const queued = lanes.get(next);
        if (queued?.state !== 'waiting') continue;
        queued.state = 'idle';
        wake(next);
      }
    });
    running.add(done);
  };

  const work = async (lane: Lane<T>): Promise<void> => {
    for (let item = firstDue(lane); item && !closed; item = firstDue(lane)) {
      let keep = false;
      try {
        keep = await options.run(item);
      } catch (error) {
        options.onError(error, item);
      }
      if (!keep) lane.items.splice(lane.items.indexOf(item), 1);
    }
  };

  return {
    startsAt(chat) {
      const lane = lanes.get(chat);
      return !closed && (lane === undefined || lane.state === 'idle') && active < options.concurrency;
    },
    add(chat, item) {
      let lane = lanes.get(chat);
      if (!lane) {
        lane = { items: [], state: 'idle', timer: undefined };
        lanes.set(chat, lane);
      }
      lane.items.push(item);
      wake(chat);
    },
    async close() {
      closed = true;
      for (const lane of lanes.values()) clearTimeout(lane.timer);
      await Promise.all(running);
    },
  };
}
