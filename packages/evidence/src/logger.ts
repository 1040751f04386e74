import type { AgentdLogger } from '@agentd/logging';

/**
 * What the evidence writers log through: only `warn`, with the contract's `hint` and
 * `errorKind`. An {@link AgentdLogger}, a pino logger and agent-runtime's logger all satisfy it.
 */
export type EvidenceLogger = Pick<AgentdLogger, 'warn'>;
