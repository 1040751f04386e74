/** One live instance of a cluster, as `gateway.status` lists it. Times are epoch ms. */
export interface ClusterInstance {
  instanceId: string;
  /** The URL peers and operators reach it at. */
  advertiseUrl: string;
  startedAt: number;
  /** Its last heartbeat, by the database's clock. */
  heartbeatAt: number;
}

/**
 * `gateway.status`'s `cluster`: `postgres` when the storage URL is `postgres://…` (the live
 * members), `single` for the embedded default (this instance only).
 */
export interface ClusterStatus {
  mode: 'postgres' | 'single';
  /** This instance's id. */
  instanceId: string;
  instances: ClusterInstance[];
}
