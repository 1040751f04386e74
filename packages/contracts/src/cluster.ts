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

/**
 * `error.data` of the `-32010` answer (rpc-core's `ErrorCodes.InstanceAffinity`) to a call that
 * reached an instance which does not hold what it names: a host-bound handle (terminal drive,
 * browser tab, orchestrate run) made on another live instance, or a turn or workspace of an
 * agent whose home is another instance. The caller retries at `advertiseUrl`; calls are never
 * proxied.
 */
export interface InstanceAffinityData {
  code: 'INSTANCE_AFFINITY';
  /** The instance that holds it. */
  instanceId: string;
  /** Where that instance is reached (its membership row). */
  advertiseUrl: string;
}
