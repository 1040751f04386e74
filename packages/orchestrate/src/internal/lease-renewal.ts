import { isAutonomyError } from '@agentd/autonomy';
import type { Logger } from '@agentd/contracts';

/** Options of {@link keepLeaseAlive}. */
export interface LeaseRenewalOptions {
  /** `autonomy.leases.renew`: extends the lease to now + `ttlMs`, refusing a revoked or expired one. */
  renew: (secret: string, ttlMs: number) => Promise<unknown>;
  secret: string;
  leaseId: string;
  ttlMs: number;
  logger?: Logger | undefined;
}

/**
 * Keeps a script run's child lease alive while the script runs: renewed for another `ttlMs`
 * every half of it, so a run may last longer than its lease's time to live while a crashed
 * daemon's leases still lapse soon. A refusal (revoked, expired, unknown) ends the renewal for
 * good: the lease store then refuses every further socket call with that reason. Any other
 * failure (the database briefly busy) is retried at the next tick, which still comes before
 * the lease runs out. Answers the function that stops the renewal (when the run ends).
 */
export function keepLeaseAlive(options: LeaseRenewalOptions): () => void {
  const every = Math.max(250, Math.floor(options.ttlMs / 2));
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    try {
      await options.renew(options.secret, options.ttlMs);
    } catch (error) {
      if (isAutonomyError(error, 'LEASE_INVALID')) {
        stopped = true;
        options.logger?.info(
          { step: 'orchestrate', leaseId: options.leaseId, reason: error.data?.reason },
          'orchestrate: the run lease was refused; renewal stopped',
        );
        return;
      }
      options.logger?.warn(
        {
          step: 'orchestrate',
          leaseId: options.leaseId,
          errorKind: 'internal',
          err: error,
          hint: 'the lease store (the data directory database) did not answer; retried before the lease lapses',
        },
        'orchestrate: renewing the run lease failed; retrying',
      );
    }
    schedule();
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => void tick(), every);
    // A pending renewal never keeps the daemon alive on its own.
    timer.unref();
  };
  schedule();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
