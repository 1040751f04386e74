import type { EventSink } from '@agentd/contracts';

export type {
  AgentTurnRequest,
  AgentTurnResult,
  AgentTurnRunner,
  EventSink,
  TurnOrigin,
  WakeTarget,
} from '@agentd/contracts';

/** An event sink that drops everything; the default. */
export const noopEventSink: EventSink = { emit: () => {} };
