/** One entry of the due heap: a job id and the instant it was queued for. */
export interface DueEntry {
  due: number;
  id: string;
}

/**
 * A binary min-heap of due instants. Entries are never removed in place: a job that is
 * rescheduled pushes a new entry and the old one is dropped when it surfaces (its `due` no
 * longer matches the job), which keeps every operation O(log n).
 */
export class DueHeap {
  readonly #items: DueEntry[] = [];

  get size(): number {
    return this.#items.length;
  }

  peek(): DueEntry | undefined {
    return this.#items[0];
  }

  push(entry: DueEntry): void {
    const items = this.#items;
    items.push(entry);
    let index = items.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (items[parent]!.due <= entry.due) break;
      items[index] = items[parent]!;
      index = parent;
    }
    items[index] = entry;
  }

  pop(): DueEntry | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    let index = 0;
    const length = items.length;
    for (;;) {
      const left = index * 2 + 1;
      if (left >= length) break;
      const right = left + 1;
      const child = right < length && items[right]!.due < items[left]!.due ? right : left;
      if (items[child]!.due >= last.due) break;
      items[index] = items[child]!;
      index = child;
    }
    items[index] = last;
    return top;
  }

  clear(): void {
    this.#items.length = 0;
  }
}
