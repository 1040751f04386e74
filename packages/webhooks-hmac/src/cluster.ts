import type { WebhookSqlValue } from './store.js';

/**
 * The owned-row helpers of one table, as `@agentd/storage`'s coordinator gives them
 * (`coordinator.ownedRows({ table })`): claims with `FOR UPDATE SKIP LOCKED` and a lease, and
 * writes that apply only while this instance still owns the row at the claim's fence.
 */
export interface WebhookOwnedRows {
  claim(options?: {
    where?: string | undefined;
    args?: WebhookSqlValue[] | undefined;
    orderBy?: string | undefined;
    limit?: number | undefined;
  }): Promise<Array<{ id: unknown; fence: number; row: Record<string, unknown> }>>;
  renew(id: WebhookSqlValue, fence: number): Promise<boolean>;
  write(
    id: WebhookSqlValue,
    fence: number,
    write: { set?: string; args?: WebhookSqlValue[] },
  ): Promise<boolean>;
  complete(
    id: WebhookSqlValue,
    fence: number,
    write?: { set?: string; args?: WebhookSqlValue[] },
  ): Promise<boolean>;
  sweep(): Promise<unknown[]>;
}

/**
 * The part of `@agentd/storage`'s `Coordinator` the webhook queue uses, declared here so the
 * package does not depend on storage. In `postgres` mode the queue is shared by every instance:
 * claims are owned rows and `kick()` is published on the bus; in `single` mode (libsql) the
 * queue works in process as it always has.
 */
export interface WebhookCoordinator {
  readonly mode: 'single' | 'postgres';
  readonly instanceId: string;
  ownedRows(spec: { table: string; leaseMs?: number | undefined }): WebhookOwnedRows;
  readonly bus: {
    publish(topic: string, payload: unknown): Promise<void>;
    watch(topic: string, check: () => Promise<void> | void): () => void;
  };
}

/** The bus topic a drainer publishes after an enqueue and every drainer watches. */
export const QUEUE_TOPIC = 'webhooks.queue';

/** True when `coordinator` shares the queue across instances. */
export function isCluster(coordinator: WebhookCoordinator | undefined): coordinator is WebhookCoordinator {
  return coordinator?.mode === 'postgres';
}
