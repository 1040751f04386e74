import type { DeliveryAttempt, OutboundOperation, OutboundResult } from '../adapter.js';
import type { DeliveryEntry } from './queue-store.js';

/** The reason stored on a run's send that a crash left in doubt. */
export const IN_DOUBT_REASON =
  'in doubt: the daemon stopped during the attempt and the platform cannot say whether it was sent';

/** What becomes of a `sending` row whose attempt was cut off (a crash, or a lane owner that died). */
export type InDoubtOutcome =
  | { kind: 'sent'; messageId: string }
  | { kind: 'requeue' }
  | { kind: 'deadLetter'; reason: string }
  | { kind: 'unknown'; error: unknown };

/**
 * The package's rule for an attempt cut off between its claim and its record: the platform is
 * asked where it can tell (`sent` when it was, `requeue` when it was not); otherwise a run's send
 * (`rootRunId`, exactly-once) goes to `deadLetter` as in doubt and any other send is queued again
 * (at-least-once). `unknown` when the platform could not be asked now (nothing is re-sent).
 */
export async function settleInDoubt(
  entry: DeliveryEntry,
  reconcile:
    | ((
        channelType: string,
        operation: OutboundOperation,
        attempt: DeliveryAttempt,
      ) => Promise<OutboundResult | null | undefined>)
    | undefined,
): Promise<InDoubtOutcome> {
  let found: OutboundResult | null | undefined;
  try {
    found = await reconcile?.(entry.channelType, entry.operation, {
      deliveryId: entry.deliveryId,
      attempt: entry.attempts,
    });
  } catch (error) {
    return { kind: 'unknown', error };
  }
  if (found) return { kind: 'sent', messageId: found.messageId };
  if (found === null || entry.rootRunId === undefined) return { kind: 'requeue' };
  return { kind: 'deadLetter', reason: IN_DOUBT_REASON };
}
