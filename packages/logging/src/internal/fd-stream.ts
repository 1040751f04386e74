import { write } from 'node:fs';

// Errors that mean "try again shortly"; any other error means the reader is gone for good.
const RETRYABLE = new Set(['EAGAIN', 'EWOULDBLOCK', 'EINTR', 'EBUSY']);
const RETRY_DELAY_MS = 10;

/** Options of {@link FdStream}. */
export interface FdStreamOptions {
  /** The file descriptor written to (1 for stdout). */
  fd: number;
  /** Bytes held while the reader is slow; lines beyond are dropped and counted. */
  maxPendingBytes: number;
}

/**
 * A pino destination that writes to a file descriptor (stdout) without ever holding up the
 * process. pino's own stdout destination retries a failed write forever in its exit hook, so a
 * daemon whose parent closed the pipe (EPIPE) logged `shutdown complete` and never exited.
 * Here writes run off the main thread (`fs.write`), a write error other than "try again"
 * marks the stream broken and every later line is dropped, and a reader that stops reading
 * only costs a bounded buffer. Nothing is registered on process exit.
 */
export class FdStream {
  readonly #fd: number;
  readonly #maxPendingBytes: number;
  #pending: string[] = [];
  #pendingBytes = 0;
  #inFlight: Buffer | undefined;
  #broken: NodeJS.ErrnoException | undefined;
  #idle: Array<() => void> = [];
  #dropped = 0;

  constructor(options: FdStreamOptions) {
    this.#fd = options.fd;
    this.#maxPendingBytes = options.maxPendingBytes;
  }

  /** Lines dropped because the reader was gone or too slow. */
  get dropped(): number {
    return this.#dropped;
  }

  /** The error that made the stream stop writing, if any. */
  get broken(): NodeJS.ErrnoException | undefined {
    return this.#broken;
  }

  /** Queues one line; never throws and never blocks. */
  write(line: string): boolean {
    if (this.#broken || this.#pendingBytes + line.length > this.#maxPendingBytes) {
      this.#dropped += 1;
      return true;
    }
    this.#pending.push(line);
    this.#pendingBytes += line.length;
    if (this.#inFlight === undefined) this.#writeNext();
    return true;
  }

  /** Resolves once every queued line was written (or dropped because the stream broke). */
  flush(): Promise<void> {
    if (this.#inFlight === undefined && this.#pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #writeNext(): void {
    if (this.#inFlight === undefined) {
      if (this.#pending.length === 0) {
        for (const resolve of this.#idle.splice(0)) resolve();
        return;
      }
      this.#inFlight = Buffer.from(this.#pending.join(''));
      this.#pending = [];
      this.#pendingBytes = 0;
    }
    const chunk = this.#inFlight;
    write(this.#fd, chunk, 0, chunk.length, null, (error, written) => {
      if (error) {
        if (RETRYABLE.has(error.code ?? '')) {
          // unref: a retry must not keep a process alive that has nothing else to do.
          setTimeout(() => this.#writeNext(), RETRY_DELAY_MS).unref();
          return;
        }
        this.#fail(error);
        return;
      }
      this.#inFlight = written < chunk.length ? chunk.subarray(written) : undefined;
      this.#writeNext();
    });
  }

  #fail(error: NodeJS.ErrnoException): void {
    this.#broken = error;
    this.#dropped += this.#pending.length + (this.#inFlight ? 1 : 0);
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#inFlight = undefined;
    for (const resolve of this.#idle.splice(0)) resolve();
  }
}
