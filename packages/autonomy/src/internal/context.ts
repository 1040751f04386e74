import type { AgentTurnResult, EventSink, Logger, ToolServerStatus } from '@agentd/contracts';
import type { Coordinator, Database, OwnedRows } from '@agentd/storage';
import type { SecurityAudit } from '@agentd/evidence/audit';
import type { AutonomySection, SecuritySection } from '../config.js';
import type { SubagentTurnRequest } from '../gate-types.js';
import type { LeaseStore } from '../lease-store.js';
import type { RunRecord, RunStore } from '../run-store.js';

/** Runs turns with the runtime's extras (allowed tools, turn keys). */
export interface SubagentTurnRunner {
  runTurn(request: SubagentTurnRequest): Promise<AgentTurnResult>;
}

/** A process a run started (a tool's child); killed with the run. */
export interface RunProcess {
  readonly pid?: number | undefined;
  kill(signal?: NodeJS.Signals | number): boolean;
}

/** A run this process is executing now. */
export interface ActiveRun {
  record: RunRecord;
  controller: AbortController;
  /**
   * Messages `subagent.steer` injected: taken into the running turn at its next step boundary,
   * or as the next turn when they came during the turn's last model call.
   */
  steerQueue: string[];
  processes: Set<RunProcess>;
  /** Settles when the run has ended and its end is written. */
  done: Promise<void>;
  /** A budget breach was already recorded for this run. */
  breached: boolean;
}

/** Notifies gateway clients: `clientId` undefined means every connected client. */
export type Notifier = (
  clientId: string | undefined,
  method: string,
  params: Record<string, unknown>,
) => void;

/** What every part of the service shares. */
export interface AutonomyContext {
  store: RunStore;
  leases: LeaseStore;
  settings: { autonomy: AutonomySection; security: SecuritySection };
  runner: () => SubagentTurnRunner;
  toolsOf: (agentId: string) => string[] | undefined;
  agentOf: (sessionKey: string) => Promise<string | undefined>;
  costOf: (sessionKey: string, sinceMs: number) => Promise<number>;
  recordOnParent: (parentSessionKey: string, note: string) => Promise<void>;
  notifier: { current: Notifier | undefined };
  /** Status of the tool servers (MCP) whose tools agents use, once the daemon has them. */
  toolServers: { current: (() => readonly ToolServerStatus[]) | undefined };
  audit: SecurityAudit;
  events: EventSink;
  logger: Logger;
  now: () => number;
  newId: () => string;
  active: Map<string, ActiveRun>;
  bySession: Map<string, string>;
  /** Consecutive denied tool calls per run tree. */
  denials: Map<string, number>;
  /** Last steer per target run, for the 2 s rate limit. */
  steeredAt: Map<string, number>;
  evicted: Set<string>;
  closed: boolean;
  /** Cluster mode (PostgreSQL) only: how runs are owned and reached across instances. */
  cluster: ClusterRuns | undefined;
}

/** A cluster's view of the runs: the coordinator, the owned-row helpers, the fences held here. */
export interface ClusterRuns {
  db: Database;
  coordinator: Coordinator;
  rows: OwnedRows;
  leaseMs: number;
  /** The fence this instance holds each of its running runs at. */
  fences: Map<string, number>;
}
