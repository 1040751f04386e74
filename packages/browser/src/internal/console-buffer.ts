/** One console message of a tab. */
export interface ConsoleEntry {
  /** `debug`, `info`, `log`, `warn` or `error` (uncaught page errors are `error`). */
  level: string;
  text: string;
  /** Milliseconds since the epoch when the message was captured. */
  timestamp: number;
}

const levels: Record<string, string> = {
  debug: 'debug',
  info: 'info',
  log: 'log',
  warning: 'warn',
  error: 'error',
  assert: 'error',
  trace: 'debug',
  verbose: 'debug',
};

/** Chromium's console types folded into five levels a reader can filter on. */
export function consoleLevel(type: string): string {
  return levels[type] ?? 'log';
}

/** A bounded ring of console entries for one tab; the oldest go first. */
export class ConsoleBuffer {
  readonly #entries: ConsoleEntry[] = [];
  #dropped = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxTextLength: number,
  ) {}

  push(entry: ConsoleEntry): void {
    const text =
      entry.text.length > this.maxTextLength ? `${entry.text.slice(0, this.maxTextLength)}…` : entry.text;
    this.#entries.push({ ...entry, text });
    if (this.#entries.length > this.maxEntries) {
      this.#entries.shift();
      this.#dropped++;
    }
  }

  /** A copy of the kept entries, oldest first, and how many were dropped to stay in bounds. */
  read(): { entries: ConsoleEntry[]; dropped: number } {
    return { entries: this.#entries.slice(), dropped: this.#dropped };
  }
}
