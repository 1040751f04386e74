import type { WakeTarget } from '@agentd/contracts';
import type { PendingWake, WebhookStore } from './store.js';

export type { WakeTarget } from '@agentd/contracts';

/**
 * Hands every wake recorded while no {@link WakeTarget} existed to `target`, oldest
 * first, then marks them consumed (a crash in between hands them over again, which a
 * heartbeat absorbs: a wake is a nudge, not a task). Returns how many were handed over.
 */
export async function deliverPendingWakes(store: WebhookStore, target: WakeTarget): Promise<number> {
  let delivered = 0;
  for (;;) {
    const batch: PendingWake[] = await store.pendingWakes(100);
    if (batch.length === 0) return delivered;
    for (const wake of batch) {
      if (wake.mode === 'now') target.wakeNow(wake.text);
      else target.queueForNextBeat(wake.text);
    }
    delivered += await store.consumeWakes(batch.map((wake) => wake.id));
  }
}
