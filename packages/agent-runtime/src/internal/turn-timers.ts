import { AgentRuntimeError } from '../errors.js';

/** Why a turn was stopped from outside the model stream. */
export type StopCause = 'timeout' | 'cancelled';

/**
 * The timers of one turn: the makespan for the whole turn, the stall timer for silence of
 * the model stream, and the caller's signal. Any of them aborts `signal` once.
 */
export class TurnTimers {
  readonly #controller = new AbortController();
  readonly #makespan: NodeJS.Timeout;
  readonly #stallMs: number;
  readonly #outer: AbortSignal | undefined;
  readonly #onOuterAbort = () => this.#stop('cancelled');
  #stall: NodeJS.Timeout | undefined;
  #cause: StopCause | undefined;

  constructor(makespanMs: number, stallMs: number, outer: AbortSignal | undefined) {
    this.#stallMs = stallMs;
    this.#outer = outer;
    this.#makespan = setTimeout(() => this.#stop('timeout'), makespanMs);
    if (outer?.aborted) this.#stop('cancelled');
    else outer?.addEventListener('abort', this.#onOuterAbort, { once: true });
  }

  /** Aborted when the turn times out or is cancelled. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Set once the turn was stopped. */
  get stopCause(): StopCause | undefined {
    return this.#cause;
  }

  /** (Re)starts the stall timer: called before a model call and on every streamed event. */
  armStall(): void {
    clearTimeout(this.#stall);
    this.#stall = setTimeout(() => this.#stop('timeout'), this.#stallMs);
  }

  /** Stops the stall timer (the model stream ended). */
  clearStall(): void {
    clearTimeout(this.#stall);
  }

  /** Stops every timer and detaches from the caller's signal. */
  dispose(): void {
    clearTimeout(this.#makespan);
    clearTimeout(this.#stall);
    this.#outer?.removeEventListener('abort', this.#onOuterAbort);
  }

  #stop(cause: StopCause): void {
    if (this.#cause) return;
    this.#cause = cause;
    this.#controller.abort(new AgentRuntimeError('PROVIDER_ERROR', `turn ${cause}`));
  }
}
