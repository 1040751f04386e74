import type { GraphAuthor } from './events.js';
import type { NodeStatus, RunStatus } from './execute.js';

/** Characters of each value returned by output retrieval (the contract's limit). */
export const OUTPUT_VALUE_LIMIT = 12_000;
/** Characters of each node output shown by `status` (the contract's limit). */
export const STATUS_OUTPUT_LIMIT = 500;

/** Ids of graphs and runs: what `randomId()` produces and what can be a file name. */
export const entityIdPattern = /^[A-Za-z0-9_-]{1,128}$/;
/** Names of saved graphs: 1-128 characters, no control characters. */
export const savedNamePattern = /^[^\p{Cc}]{1,128}$/u;

/** What `define` and `load` return. */
export interface DefinedGraph {
  graphId: string;
  nodeCount: number;
}

/** One node in `status`. */
export interface RunStatusNode {
  id: string;
  status: NodeStatus;
  /** First {@link STATUS_OUTPUT_LIMIT} characters, once completed. */
  output?: string;
  error?: string;
}

/** What `status` returns. */
export interface RunStatusView {
  runId: string;
  graphId: string;
  status: RunStatus;
  startedAt: number;
  finishedAt?: number;
  nodes: RunStatusNode[];
}

/** What output retrieval returns: `null` for a node not complete. */
export interface RunOutputs {
  outputs: Record<string, string | null>;
  source: 'memory' | 'disk';
}

/** A saved named graph, as `list` shows it. */
export interface SavedGraph {
  name: string;
  createdAt: number;
  nodeCount: number;
}

/** One run in `runs`. */
export interface RunSummary {
  runId: string;
  graphId: string;
  status: RunStatus;
  startedAt: number;
  finishedAt?: number;
  nodeCount: number;
}

/** One node in `runDetail`. */
export interface RunDetailNode {
  id: string;
  agentId?: string;
  dependsOn: string[];
  status: NodeStatus;
  attempts: number;
  startedAt?: number;
  finishedAt?: number;
  error?: string;
  /** Length of the full output, once completed. */
  outputChars?: number;
}

/** What `runDetail` returns. */
export interface RunDetail extends RunSummary {
  name?: string;
  inputs: Record<string, unknown>;
  concurrency: number;
  defaultAgentId?: string;
  cancelRequested: boolean;
  /** How many times the run was resumed after a restart. */
  resumedCount: number;
  counts: Record<NodeStatus, number>;
  nodes: RunDetailNode[];
}

/** Options of {@link GraphService.execute}. */
export interface ExecuteOptions {
  /** Who asked; reported in `pipeline:authored`. @default { origin: 'rpc' } */
  author?: GraphAuthor | undefined;
  /** Agent for nodes that name none. */
  defaultAgentId?: string | undefined;
  /**
   * The agent-to-agent gate: given the agents the run would act as, false refuses the run
   * with `POLICY_DENIED` (and the authoring is reported as excluded).
   */
  authorize?: ((agentIds: string[]) => boolean | Promise<boolean>) | undefined;
}
