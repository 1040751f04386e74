import type { EventSink } from '@agentd/contracts';

export type {
  AgentTurnRequest,
  AgentTurnResult,
  AgentTurnRunner,
  EventSink,
  TurnOrigin,
} from '@agentd/contracts';

/** An event sink that drops everything; the default. */
export const noopEventSink: EventSink = { emit: () => {} };

/**
 * What webhook `wake` actions call: `wakeNow` runs a heartbeat at once (coalesced with
 * other wakes), `queueForNextBeat` hands text to the next scheduled heartbeat.
 */
export interface WakeTarget {
  /** Runs a heartbeat now; `text`, when given, is included in that beat's message. */
  wakeNow(text?: string): void;
  /** Queues `text` for the next heartbeat, whenever it runs. */
  queueForNextBeat(text: string): void;
}
