import type { AgentdErrorOptions, ValidationIssue } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/**
 * Every `code` a {@link GraphError} can carry.
 *
 * - `INVALID_GRAPH`: a definition failed the schema or the structural checks (duplicate id,
 *   dangling dependency, cycle, limits); `data.issues` names each problem by path.
 * - `INVALID_ARGUMENT`: a call argument other than the definition is malformed (inputs,
 *   concurrency, a saved-graph name).
 * - `INVALID_OPTIONS`: a factory received options that fail validation.
 * - `GRAPH_NOT_FOUND`: no defined graph has that `graphId`.
 * - `SAVED_GRAPH_NOT_FOUND`: no saved graph has that name.
 * - `RUN_NOT_FOUND`: no run has that `runId`.
 * - `NODE_NOT_FOUND`: the run's graph has no node of that id.
 * - `RUN_ACTIVE`: the run is still pending or running (it cannot be deleted yet).
 * - `POLICY_DENIED`: the agent-to-agent policy refused to let the author run a node's agent.
 * - `EXECUTOR_UNAVAILABLE`: the service has no node executor, so nothing can run.
 * - `NODE_TIMEOUT`: a node attempt ran past its time limit (recorded as the node's error).
 * - `NODE_OUTPUT_INVALID`: an executor resolved with something other than a string.
 * - `CLOSED`: the service was used after `close()`.
 */
export type GraphErrorCode =
  | 'INVALID_GRAPH'
  | 'INVALID_ARGUMENT'
  | 'INVALID_OPTIONS'
  | 'GRAPH_NOT_FOUND'
  | 'SAVED_GRAPH_NOT_FOUND'
  | 'RUN_NOT_FOUND'
  | 'NODE_NOT_FOUND'
  | 'RUN_ACTIVE'
  | 'POLICY_DENIED'
  | 'EXECUTOR_UNAVAILABLE'
  | 'NODE_TIMEOUT'
  | 'NODE_OUTPUT_INVALID'
  | 'CLOSED';

/**
 * One problem found in a definition or an argument, located by its path; `code` is
 * `duplicate_id`, `unknown_dependency`, `cycle` or a zod issue code.
 */
export type GraphIssue = ValidationIssue;

/**
 * Options accepted by the {@link GraphError} constructor. `data`: structured detail: `issues` for
 * validation failures, ids for lookups.
 */
export type GraphErrorOptions = AgentdErrorOptions;

/** The one error class of this package; switch on `code`, not on the message. `data` never holds prompt or output bodies. */
export class GraphError extends AgentdError<GraphErrorCode> {
  override readonly name = 'GraphError';

  /** The issues of an `INVALID_GRAPH` or `INVALID_ARGUMENT` error; empty otherwise. */
  get issues(): GraphIssue[] {
    const issues = this.data?.issues;
    return Array.isArray(issues) ? (issues as GraphIssue[]) : [];
  }
}

/** True when `error` is a {@link GraphError}, optionally with the given code. */
export const isGraphError = errorGuard(GraphError);
