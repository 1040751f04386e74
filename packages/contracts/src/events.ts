/**
 * Receives the daemon's internal events (its in-process bus). Payloads hold counts,
 * ids and closed enums, never message bodies, prompts or memory content.
 */
export interface EventSink {
  /** Reports `event` (e.g. `memory:recalled`); must not throw. */
  emit(event: string, payload: Record<string, unknown>): void;
}
