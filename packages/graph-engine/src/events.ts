import type { EventSink } from '@agentd/contracts';

/**
 * Where the service reports internal events (`EventSink` from `@agentd/contracts`). The
 * daemon passes its in-process bus; the default drops them. Payloads carry counts, ids and
 * closed enums, never prompts or outputs.
 */
export type { EventSink } from '@agentd/contracts';

/** A sink that drops every event. */
export const noopEventSink: EventSink = { emit: () => undefined };

/** Capability class (tier) of the model behind the authoring agent. */
export type CapabilityClass = 'frontier' | 'mid' | 'small' | 'nano' | 'unknown';

/** Who authored a `define` or `execute`. */
export interface GraphAuthor {
  /** `rpc` for gateway calls, `tool` for an agent using the graph tools. */
  origin: 'rpc' | 'tool';
  /** The authoring agent, when an agent authored it. */
  agentId?: string | undefined;
  /**
   * The tenant of a tenant-bound caller: the graphs it defines, saves and runs are that
   * tenant's, and their nodes run in the tenant's sessions (`<tenant>:graph:<runId>:<nodeId>`).
   */
  tenant?: string | undefined;
}

/**
 * Payload of `pipeline:authored`, emitted once per `define` and per `execute`. It feeds the
 * `pipeline_authoring` health signal and `pipelineAuthoringGate`: validity by capability class.
 */
export interface PipelineAuthoredPayload {
  action: 'define' | 'execute';
  origin: 'rpc' | 'tool';
  /** The authoring agent, or null for a gateway client. */
  agentId: string | null;
  capabilityClass: CapabilityClass;
  /** Whether the body parsed and the graph validated (for execute: the run started). */
  valid: boolean;
  /** Nodes in the authored graph (0 when the body did not parse). */
  nodeCount: number;
  /** Why it was invalid: the body did not parse, the graph failed validation, or the graph is unknown. */
  invalidReason?: 'parse' | 'validation' | 'not_found';
  /**
   * Set when the contract keeps this authoring out of the validity cohorts: a `define` with
   * no nodes, or an `execute` refused by the agent-to-agent policy.
   */
  excluded?: 'empty_define' | 'policy_rejected';
  graphId?: string;
  runId?: string;
  timestamp: number;
}

/** The event name the contract gives pipeline authorings. */
export const PIPELINE_AUTHORED = 'pipeline:authored';
