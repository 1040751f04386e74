import type { Logger } from '@agentd/contracts';
import type { ApprovalAuditEvent, ApprovalAuditSink, ApprovalEvent } from '../types.js';

/** The audit fields of one event; `kind` is always `approval`. */
export type AuditFields = Pick<ApprovalAuditEvent, 'classification' | 'outcome' | 'severity'> &
  Record<string, unknown>;

/**
 * Where the service's news goes: `audit:event` rows to the audit sink and `requested` /
 * `resolved` events to the subscribed listeners. Neither may turn a decision into a failure.
 */
export class Notices {
  readonly #audit: ApprovalAuditSink | undefined;
  readonly #logger: Logger;
  readonly #listeners = new Set<(event: ApprovalEvent) => void>();

  constructor(audit: ApprovalAuditSink | undefined, logger: Logger) {
    this.#audit = audit;
    this.#logger = logger;
  }

  audit(event: AuditFields): void {
    try {
      this.#audit?.emit({ kind: 'approval', ...event });
    } catch {
      // The sink promises not to throw; a decision never fails because auditing did.
    }
  }

  announce(event: ApprovalEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (err) {
        this.#logger.warn(
          { err, hint: 'an approval event listener threw; the decision stands', errorKind: 'internal' },
          'approval event not delivered',
        );
      }
    }
  }

  subscribe(listener: (event: ApprovalEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
